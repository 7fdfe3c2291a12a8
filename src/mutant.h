/* mutant.h — planted defects for scripts/mutants; nothing in a normal build.
 *
 * RR_MUTANT_IS(name) is 1 in a build made with `make MUTANT=name` (the
 * Makefile defines RR_MUTANT_name=1, only with BUILD=build-mutant-name),
 * and 0 otherwise, so `if (RR_MUTANT_IS(name))` compiles to nothing in a
 * normal build. Each use disables one safety mechanism; scripts/mutants
 * lists them with the tests that must notice. The names are the mutants'
 * own (not yet defined ones are simply 0): the Linux kernel's IS_ENABLED
 * trick, a defined name expanding to "0," that shifts the 1 into place.
 */
#ifndef RR_MUTANT_H
#define RR_MUTANT_H

#define RR_MUTANT_ON_1 0,
#define RR_MUTANT_IS(name) rr_mutant_is_(RR_MUTANT_##name)
#define rr_mutant_is_(v) rr_mutant_is__(v)
#define rr_mutant_is__(v) rr_mutant_is___(RR_MUTANT_ON_##v)
#define rr_mutant_is___(arg) rr_mutant_take2_(arg 1, 0, 0)
#define rr_mutant_take2_(skip, val, ...) val

#endif
