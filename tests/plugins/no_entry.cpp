// Test fixture: a shared library that is not a torsh plugin.
extern "C" int some_other_symbol(void) { return 42; }
