// WIDTH (elements per thread) comes from the Makefile's flags.
#pragma once
#ifndef WIDTH
#error "WIDTH is not defined"
#endif
