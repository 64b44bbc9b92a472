/*
 * Forced-included (-include) into every Lua 5.1 source file by build.rs.
 *
 * The Kruise controller runs gopher-lua, which turns numbers into strings
 * (tostring, "..", table.concat, string arguments) with Go's fmt.Sprint:
 * integral values that fit an int64 print as integers, everything else in
 * Go's shortest round-trip form ("0.30000000000000004", "1.2345675e+06",
 * "+Inf", "NaN"). PUC Lua 5.1 uses "%.14g". To print exactly what the
 * controller would, lua_number2str is replaced here, as are luai_nummod and
 * luai_numpow (the % and ^ operators, below); luaconf.h has an include guard,
 * so including it first and redefining the macros afterwards sticks.
 * luaconf.h has sections that only the core and loslib.c see; enabling them
 * for every file is harmless (extra macros) and keeps those files compiling.
 */
#ifndef LUA_GO_NUMBERS_H
#define LUA_GO_NUMBERS_H

#include <stddef.h>

/* gopher-lua's text of a number (its LNumber.String()): a whole number an
 * int64 holds as that integer, anything else as Go's %v. NUL-terminated in
 * out (size bytes). Written in Rust (src/lua/stack.rs, from src/lua/gofmt.rs,
 * which string.format's %s shares). */
void rollout_lua_number2str(double n, char *out, size_t size);

#define LUA_CORE
#define loslib_c
#include "luaconf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#undef lua_number2str
#define lua_number2str(s, n) rollout_lua_number2str((n), (s), LUAI_MAXNUMBER2STR)

/* gopher-lua's parseNumber (utils.go), how it reads a string as a number in
 * arithmetic and a numeral in the source: Go's ParseInt(text, 0, 64), else
 * ParseFloat(text, 64), of the text without " \t\n" around it. 1 with
 * *number set, or 0. Written in Rust (src/lua/stack.rs), with tonumber's
 * parsing. */
int rollout_lua_parse_number(const char *text, size_t length, double *number);

/* gopher-lua's % (luaModulo in its vm.go, which its math.mod calls too):
 * Go's math.Mod, which is C's fmod (both exact), plus the divisor when the
 * dividend is negative or the divisor alone is, so that -6 % 3 is 3 there
 * and -7 % -3 is -4. Constant folding (lcode.c) computes it the same way. */
static double lua_go_modulo(double a, double b) {
  double v;
  /* whole numbers below 2^53 (not 0, whose sign fmod keeps): fmod's exact
   * result, at the speed of an integer division rather than fmod's */
  if (fabs(a) < 9007199254740992.0 && fabs(b) < 9007199254740992.0 && a != 0 && b != 0 &&
      a == (double)(long long)a && b == (double)(long long)b)
    v = (double)((long long)a % (long long)b);
  else v = fmod(a, b);
  /* gopher-lua's luaModulo: `lhs < 0 || rhs < 0 && !(lhs < 0 && rhs < 0)`, which is
   * either operand negative */
  if (a < 0 || b < 0) v += b;
  return v;
}

#undef luai_nummod
#define luai_nummod(a, b) lua_go_modulo((a), (b))

/* Go's math functions as gopher-lua calls them (lua-5.1.5/lgomath.c): ^ is
 * Go's math.Pow, in the virtual machine and in constant folding. */
#include <stdint.h>
double lua_go_pow(double x, double y);
double lua_go_exp(double x);
double lua_go_log(double x);
double lua_go_log10(double x);
double lua_go_sinh(double x);
double lua_go_cosh(double x);
double lua_go_tanh(double x);
double lua_go_sin(double x);
double lua_go_cos(double x);
double lua_go_tan(double x);
double lua_go_asin(double x);
double lua_go_acos(double x);
double lua_go_atan(double x);
double lua_go_atan2(double y, double x);
double lua_go_frexp(double f, int64_t *exp);
double lua_go_ldexp(double frac, int64_t exp);
double lua_go_modf(double f, double *ip);

#undef luai_numpow
#define luai_numpow(a, b) lua_go_pow((a), (b))

#endif
