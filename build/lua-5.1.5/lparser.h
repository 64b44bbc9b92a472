/*
** $Id: lparser.h,v 1.57.1.1 2007/12/27 13:02:25 roberto Exp $
** Lua Parser
** See Copyright Notice in lua.h
*/

#ifndef lparser_h
#define lparser_h

#include "llimits.h"
#include "lobject.h"
#include "lzio.h"


/*
** Expression descriptor
*/

typedef enum {
  VVOID,	/* no value */
  VNIL,
  VTRUE,
  VFALSE,
  VK,		/* info = index of constant in `k' */
  VKNUM,	/* nval = numerical value */
  VLOCAL,	/* info = local register */
  VUPVAL,       /* info = index of upvalue in `upvalues' */
  VGLOBAL,	/* info = index of table; aux = index of global name in `k' */
  VINDEXED,	/* info = table register; aux = index register (or `k') */
  VJMP,		/* info = instruction pc */
  VRELOCABLE,	/* info = instruction pc */
  VNONRELOC,	/* info = result register */
  VCALL,	/* info = instruction pc */
  VVARARG	/* info = instruction pc */
} expkind;

/* kubectl-rollout-lua: how many value tests of one assignment are kept for
   gopher-lua's stores (lcode.c: luaK_gostore); past it, Lua's code */
#define LUAI_GOSTORED	64


typedef struct expdesc {
  expkind k;
  union {
    struct { int info, aux; } s;
    lua_Number nval;
  } u;
  int t;  /* patch list of `exit when true' */
  int f;  /* patch list of `exit when false' */
  int cl;  /* kubectl-rollout-lua: its value tests gopher-lua stores (lcode.c) */
} expdesc;


typedef struct upvaldesc {
  lu_byte k;
  lu_byte info;
} upvaldesc;


struct BlockCnt;  /* defined in lparser.c */


/* state needed to generate code for a given function */
typedef struct FuncState {
  Proto *f;  /* current function header */
  Table *h;  /* table to find (and reuse) elements in `k' */
  struct FuncState *prev;  /* enclosing function */
  struct LexState *ls;  /* lexical state */
  struct lua_State *L;  /* copy of the Lua state */
  struct BlockCnt *bl;  /* chain of current blocks */
  int pc;  /* next position to code (equivalent to `ncode') */
  int lasttarget;   /* `pc' of last `jump target' */
  int jpc;  /* list of pending jumps to `pc' */
  int freereg;  /* first free register */
  int nk;  /* number of elements in `k' */
  int np;  /* number of elements in `p' */
  short nlocvars;  /* number of elements in `locvars' */
  lu_byte nactvar;  /* number of active local variables */
  upvaldesc upvalues[LUAI_MAXUPVALUES];  /* upvalues */
  unsigned short actvar[LUAI_MAXVARS];  /* declared-variable stack */
  /* kubectl-rollout-lua: the register of the local an assignment stores to
     last (-1 if none), and where and on which line its value was last read
     (see luaK_gostore) */
  int assigned;
  int lastread;
  int readline;
  /* kubectl-rollout-lua: the value tests of an assignment's `and' and `or'
     operands that jump to the next operand, as lists (expdesc.cl) */
  int clpc[LUAI_GOSTORED];
  int clnext[LUAI_GOSTORED];
  int ncl;
  int constpc[LUAI_GOSTORED];  /* tests of constants: gopher-lua jumps */
  int nconst;
  /* kubectl-rollout-lua: where the body of the generic `for' parsed last
     starts (see ifstat) */
  int forbody;
  /* kubectl-rollout-lua: gopher-lua's last instruction, when it loads nil
     into registers gonila..gonilb: then gonilpc is this engine's pc after
     the code it made for it (see gonil in lcode.c) */
  int gonilpc;
  int gonila;
  int gonilb;
  int statline;  /* the first line of the statement parsed last */
  /* kubectl-rollout-lua: the leftmost operand of the condition or value being
     read and the operators over it (see cond and expr) */
  struct Spine {
    int spine;       /* reading them: 1 a condition, 2 a value */
    int leaf;        /* 0: not read yet; 1: nil or false; 2: anything else */
    int spinenots;   /* `not's over it below any `and' or `or' */
    int spinelogic;  /* the lowest `and' (1) or `or' (2) over it; 0: none */
    int spineother;  /* another operator over it */
    /* for a value read first in a generic `for''s body (see expr): its
       leftmost operand, 1 `true', 2 `false', 3 `nil', 4 a number or a string,
       5 anything else; the operator right over it (1 `and', 2 `or', 3
       another); whether the operand after that one starts with a constant or
       a `(' (-1: not read yet); and the `and's (1) and `or's (2) above it, up
       to another operator (4) */
    int valueleaf;
    int spinefirst;
    int spinesibling;
    int spinerun;
  } sp;
} FuncState;


LUAI_FUNC void luaY_notequirk (struct LexState *ls, const char *key, int line);
LUAI_FUNC Proto *luaY_parser (lua_State *L, ZIO *z, Mbuffer *buff,
                                            const char *name);


#endif
