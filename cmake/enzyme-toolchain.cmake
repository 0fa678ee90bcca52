# CMake toolchain file for enzyme-cc: `cmake -DCMAKE_TOOLCHAIN_FILE=$(enzyme-cc --print-toolchain-file)`.
# Compilers are the enzyme wrappers found next to this package's scripts (or on PATH); the
# archiver is LLVM 22's, which indexes objects carrying LLVM 22 bitcode correctly.
find_program(ENZYME_CC NAMES enzyme-cc REQUIRED)
find_program(ENZYME_CXX NAMES enzyme-c++ REQUIRED)
find_program(ENZYME_FC NAMES enzyme-fc)
set(CMAKE_C_COMPILER "${ENZYME_CC}" CACHE FILEPATH "enzyme-cc")
set(CMAKE_CXX_COMPILER "${ENZYME_CXX}" CACHE FILEPATH "enzyme-c++")
if(ENZYME_FC)
  set(CMAKE_Fortran_COMPILER "${ENZYME_FC}" CACHE FILEPATH "enzyme-fc")
endif()
find_program(ENZYME_AR NAMES llvm-ar-22 llvm-ar REQUIRED)
find_program(ENZYME_RANLIB NAMES llvm-ranlib-22 llvm-ranlib REQUIRED)
set(CMAKE_AR "${ENZYME_AR}" CACHE FILEPATH "LLVM 22 ar")
set(CMAKE_RANLIB "${ENZYME_RANLIB}" CACHE FILEPATH "LLVM 22 ranlib")
