// A library that exists only in hipr_dlopen_probe's RUNPATH ($ORIGIN/libs).
int hipr_probe_foo(void) { return 42; }
