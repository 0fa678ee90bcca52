# CMake toolchain file for enzyme-cc: `cmake -DCMAKE_TOOLCHAIN_FILE=$(enzyme-cc --print-toolchain-file)`.
# Compilers are the enzyme wrappers of the installation this file belongs to (a virtual
# environment's bin/, found from this file's location), else the ones on PATH. The archiver is
# LLVM 22's, which indexes objects carrying LLVM 22 bitcode correctly.
get_filename_component(_enzyme_here "${CMAKE_CURRENT_LIST_DIR}" REALPATH)
set(_enzyme_hints
  "${_enzyme_here}/../.venv/bin"            # editable install: <repo>/cmake -> <repo>/.venv/bin
  "${_enzyme_here}/../../../../../bin")     # <prefix>/lib/pythonX.Y/site-packages/enzyme_cc/data
find_program(ENZYME_CC NAMES enzyme-cc HINTS ${_enzyme_hints} REQUIRED)
find_program(ENZYME_CXX NAMES enzyme-c++ HINTS ${_enzyme_hints} REQUIRED)
find_program(ENZYME_FC NAMES enzyme-fc HINTS ${_enzyme_hints})
set(CMAKE_C_COMPILER "${ENZYME_CC}" CACHE FILEPATH "enzyme-cc")
set(CMAKE_CXX_COMPILER "${ENZYME_CXX}" CACHE FILEPATH "enzyme-c++")
if(ENZYME_FC)
  set(CMAKE_Fortran_COMPILER "${ENZYME_FC}" CACHE FILEPATH "enzyme-fc")
endif()
find_program(ENZYME_AR NAMES llvm-ar-22 llvm-ar REQUIRED)
find_program(ENZYME_RANLIB NAMES llvm-ranlib-22 llvm-ranlib REQUIRED)
set(CMAKE_AR "${ENZYME_AR}" CACHE FILEPATH "LLVM 22 ar")
set(CMAKE_RANLIB "${ENZYME_RANLIB}" CACHE FILEPATH "LLVM 22 ranlib")
# What CMake finds itself for clang-22 (it looks beside the compiler, here a wrapper).
foreach(_lang C CXX Fortran)
  set(CMAKE_${_lang}_COMPILER_AR "${ENZYME_AR}" CACHE FILEPATH "LLVM 22 ar")
  set(CMAKE_${_lang}_COMPILER_RANLIB "${ENZYME_RANLIB}" CACHE FILEPATH "LLVM 22 ranlib")
endforeach()
