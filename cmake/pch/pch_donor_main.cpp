// The program accelbench_pch_test, which builds the test programs' precompiled header
// (cmake/accelbench_pch.cmake). Nothing runs it. No definition of its own: GCC refuses a PCH
// built with a macro that the translation unit using it does not define.
int main() { return 0; }
