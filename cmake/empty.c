/* The shared library is byocl_core linked whole; this file gives CMake a source. */
typedef int byocl_empty_translation_unit;
