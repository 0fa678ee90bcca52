"""CMake toolchain file, installed as package data (enzyme-cc --print-toolchain-file)."""
