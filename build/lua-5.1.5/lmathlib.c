/*
** $Id: lmathlib.c,v 1.67.1.1 2007/12/27 13:02:25 roberto Exp $
** Standard mathematical library
** See Copyright Notice in lua.h
*/


#include <stdlib.h>
#include <math.h>

#define lmathlib_c
#define LUA_LIB

#include "lua.h"

#include "lauxlib.h"
#include "lualib.h"


#undef PI
#define PI (3.14159265358979323846)



static int math_abs (lua_State *L) {
  lua_pushnumber(L, fabs(luaL_checknumber(L, 1)));
  return 1;
}

static int math_sin (lua_State *L) {
  lua_pushnumber(L, lua_go_sin(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_sinh (lua_State *L) {
  lua_pushnumber(L, lua_go_sinh(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_cos (lua_State *L) {
  lua_pushnumber(L, lua_go_cos(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_cosh (lua_State *L) {
  lua_pushnumber(L, lua_go_cosh(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_tan (lua_State *L) {
  lua_pushnumber(L, lua_go_tan(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_tanh (lua_State *L) {
  lua_pushnumber(L, lua_go_tanh(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_asin (lua_State *L) {
  lua_pushnumber(L, lua_go_asin(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_acos (lua_State *L) {
  lua_pushnumber(L, lua_go_acos(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_atan (lua_State *L) {
  lua_pushnumber(L, lua_go_atan(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_atan2 (lua_State *L) {
  lua_pushnumber(L, lua_go_atan2(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_ceil (lua_State *L) {
  lua_pushnumber(L, ceil(luaL_checknumber(L, 1)));
  return 1;
}

static int math_floor (lua_State *L) {
  lua_pushnumber(L, floor(luaL_checknumber(L, 1)));
  return 1;
}

static int math_fmod (lua_State *L) {
  lua_pushnumber(L, fmod(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

/* kubectl-rollout-lua: gopher-lua's math.mod is its % (lua_go_modulo) */
static int math_mod (lua_State *L) {
  lua_pushnumber(L, lua_go_modulo(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

static int math_modf (lua_State *L) {
  double ip;
  double fp = lua_go_modf(luaL_checknumber(L, 1), &ip);  /* kubectl-rollout-lua: Go's, see lgomath.c */
  lua_pushnumber(L, ip);
  lua_pushnumber(L, fp);
  return 2;
}

static int math_sqrt (lua_State *L) {
  lua_pushnumber(L, sqrt(luaL_checknumber(L, 1)));
  return 1;
}

static int math_pow (lua_State *L) {
  lua_pushnumber(L, lua_go_pow(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_log (lua_State *L) {
  lua_pushnumber(L, lua_go_log(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_log10 (lua_State *L) {
  lua_pushnumber(L, lua_go_log10(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

static int math_exp (lua_State *L) {
  lua_pushnumber(L, lua_go_exp(luaL_checknumber(L, 1)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}

/* kubectl-rollout-lua: gopher-lua's x * 180 / math.Pi and x * math.Pi / 180 */
static int math_deg (lua_State *L) {
  lua_pushnumber(L, luaL_checknumber(L, 1)*180/PI);
  return 1;
}

static int math_rad (lua_State *L) {
  lua_pushnumber(L, luaL_checknumber(L, 1)*PI/180);
  return 1;
}

static int math_frexp (lua_State *L) {
  int64_t e;
  lua_pushnumber(L, lua_go_frexp(luaL_checknumber(L, 1), &e));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  lua_pushnumber(L, (lua_Number)e);
  return 2;
}

static int math_ldexp (lua_State *L) {
  lua_Number x = luaL_checknumber(L, 1);
  lua_pushnumber(L, lua_go_ldexp(x, luaL_checkinteger(L, 2)));  /* kubectl-rollout-lua: Go's, see lgomath.c */
  return 1;
}



static int math_min (lua_State *L) {
  int n = lua_gettop(L);  /* number of arguments */
  lua_Number dmin = luaL_checknumber(L, 1);
  int i;
  for (i=2; i<=n; i++) {
    lua_Number d = luaL_checknumber(L, i);
    if (d < dmin)
      dmin = d;
  }
  lua_pushnumber(L, dmin);
  return 1;
}


static int math_max (lua_State *L) {
  int n = lua_gettop(L);  /* number of arguments */
  lua_Number dmax = luaL_checknumber(L, 1);
  int i;
  for (i=2; i<=n; i++) {
    lua_Number d = luaL_checknumber(L, i);
    if (d > dmax)
      dmax = d;
  }
  lua_pushnumber(L, dmax);
  return 1;
}


static int math_random (lua_State *L) {
  /* the `%' avoids the (rare) case of r==1, and is needed also because on
     some systems (SunOS!) `rand()' may return a value larger than RAND_MAX */
  lua_Number r = (lua_Number)(rand()%RAND_MAX) / (lua_Number)RAND_MAX;
  switch (lua_gettop(L)) {  /* check number of arguments */
    case 0: {  /* no arguments */
      lua_pushnumber(L, r);  /* Number between 0 and 1 */
      break;
    }
    case 1: {  /* only upper limit */
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1<=u, 1, "interval is empty");
      lua_pushnumber(L, floor(r*u)+1);  /* int between 1 and `u' */
      break;
    }
    default: {  /* lower and upper limits; gopher-lua ignores any further argument */
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l<=u, 2, "interval is empty");
      lua_pushnumber(L, floor(r*(u-l+1))+l);  /* int between `l' and `u' */
      break;
    }
  }
  return 1;
}


static int math_randomseed (lua_State *L) {
  srand(luaL_checkint(L, 1));
  return 0;
}


static const luaL_Reg mathlib[] = {
  {"abs",   math_abs},
  {"acos",  math_acos},
  {"asin",  math_asin},
  {"atan2", math_atan2},
  {"atan",  math_atan},
  {"ceil",  math_ceil},
  {"cosh",   math_cosh},
  {"cos",   math_cos},
  {"deg",   math_deg},
  {"exp",   math_exp},
  {"floor", math_floor},
  {"fmod",   math_fmod},
  {"mod",    math_mod},  /* kubectl-rollout-lua */
  {"frexp", math_frexp},
  {"ldexp", math_ldexp},
  {"log10", math_log10},
  {"log",   math_log},
  {"max",   math_max},
  {"min",   math_min},
  {"modf",   math_modf},
  {"pow",   math_pow},
  {"rad",   math_rad},
  {"random",     math_random},
  {"randomseed", math_randomseed},
  {"sinh",   math_sinh},
  {"sin",   math_sin},
  {"sqrt",  math_sqrt},
  {"tanh",   math_tanh},
  {"tan",   math_tan},
  {NULL, NULL}
};


/*
** Open math library
*/
LUALIB_API int luaopen_math (lua_State *L) {
  luaL_register(L, LUA_MATHLIBNAME, mathlib);
  lua_pushnumber(L, PI);
  lua_setfield(L, -2, "pi");
  lua_pushnumber(L, HUGE_VAL);
  lua_setfield(L, -2, "huge");
  return 1;
}

