// oracle: runs a traffic-routing Lua script the way the Kruise Rollout controller does
// (gopher-lua, only base/table/string/math plus a json module, obj as a global) and prints
// the returned {spec, labels, annotations} as canonical JSON. A differential reference for
// the project's own Lua engine. Usage: oracle [-bench N] [-ingress] SCRIPT.lua OBJ.json
// With -bench N it evaluates N times (a fresh state each time, as the controller does) and prints
// the mean nanoseconds per evaluation instead of the result.
// With -ingress the script is read as an Ingress script: its returned table is the canary
// Ingress's annotations, decoded into a string map as the controller does, and printed as
// canonical JSON (null for no annotations).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
)

type data struct {
	Spec        interface{}       `json:"spec,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func toLua(L *lua.LState, v interface{}) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []interface{}:
		t := L.CreateTable(len(x), 0)
		for _, e := range x {
			appendItem(t, toLua(L, e))
		}
		return t
	case map[string]interface{}:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetH(lua.LString(k), toLua(L, e))
		}
		return t
	}
	return lua.LNil
}

// fromLua mirrors the controller's encoder: an empty table is null, a table whose first key
// is a number must be a dense array from 1, otherwise every key must be a string.
func fromLua(v lua.LValue, seen map[*lua.LTable]bool) (interface{}, error) {
	switch x := v.(type) {
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case *lua.LNilType:
		return nil, nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if seen[x] {
			return nil, fmt.Errorf("cannot encode recursively nested tables to JSON")
		}
		seen[x] = true
		k, e := x.Next(lua.LNil)
		switch k.Type() {
		case lua.LTNil:
			return nil, nil
		case lua.LTNumber:
			arr := []interface{}{}
			want := lua.LNumber(1)
			for k != lua.LNil {
				if k.Type() != lua.LTNumber {
					return nil, fmt.Errorf("cannot encode mixed or invalid key types")
				}
				if k != want {
					return nil, fmt.Errorf("cannot encode sparse array")
				}
				ev, err := fromLua(e, seen)
				if err != nil {
					return nil, err
				}
				arr = append(arr, ev)
				want++
				k, e = x.Next(k)
			}
			return arr, nil
		case lua.LTString:
			m := map[string]interface{}{}
			for k != lua.LNil {
				if k.Type() != lua.LTString {
					return nil, fmt.Errorf("cannot encode mixed or invalid key types")
				}
				ev, err := fromLua(e, seen)
				if err != nil {
					return nil, err
				}
				m[k.String()] = ev
				k, e = x.Next(k)
			}
			return m, nil
		}
		return nil, fmt.Errorf("cannot encode mixed or invalid key types")
	}
	return nil, fmt.Errorf("cannot encode %s to JSON", v.Type().String())
}

func jsonEncode(L *lua.LState) int {
	v, err := fromLua(L.CheckAny(1), map[*lua.LTable]bool{})
	if err == nil {
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			L.Push(lua.LString(string(b)))
			return 1
		}
	}
	L.Push(lua.LNil)
	L.Push(lua.LString(err.Error()))
	return 2
}

func jsonDecode(L *lua.LState) int {
	var v interface{}
	if err := json.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(toLua(L, v))
	return 1
}

func openJSON(L *lua.LState) int {
	L.Push(L.RegisterModule("json", map[string]lua.LGFunction{"encode": jsonEncode, "decode": jsonDecode}))
	return 1
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}

func main() {
	bench := flag.Int("bench", 0, "evaluate N times and print mean ns per evaluation")
	flag.BoolVar(&ingress, "ingress", false, "the script is an Ingress script: print the returned annotations")
	flag.Parse()
	if flag.NArg() != 2 {
		fail("usage: oracle [-bench N] [-ingress] SCRIPT.lua OBJ.json")
	}
	script, err := ioutil.ReadFile(flag.Arg(0))
	if err != nil {
		fail("%v", err)
	}
	raw, err := ioutil.ReadFile(flag.Arg(1))
	if err != nil {
		fail("%v", err)
	}
	if *bench > 0 {
		start := time.Now()
		for i := 0; i < *bench; i++ {
			var obj interface{}
			if err := json.Unmarshal(raw, &obj); err != nil {
				fail("obj: %v", err)
			}
			if _, err := evaluate(string(script), obj); err != nil {
				fail("%v", err)
			}
		}
		fmt.Println(time.Since(start).Nanoseconds() / int64(*bench))
		return
	}
	var obj interface{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		fail("obj: %v", err)
	}
	out, err := evaluate(string(script), obj)
	if err != nil {
		fail("%v", err)
	}
	fmt.Println(out)
}

// ingress: the script returns an Ingress's annotations rather than {spec, labels, annotations}.
var ingress bool

// evaluate runs one script on one obj in a fresh state and returns canonical JSON of the result.
func evaluate(script string, obj interface{}) (string, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		n string
		f lua.LGFunction
	}{{lua.MathLibName, lua.OpenMath}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {"json", openJSON}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.f), NRet: 0, Protect: true}, lua.LString(lib.n)); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		return "", fmt.Errorf("lua: %v", err)
	}
	ret := L.Get(-1)
	if ret.Type() != lua.LTTable {
		return "", fmt.Errorf("expect table output from Lua script, not %s", ret.Type().String())
	}
	v, err := fromLua(ret, map[*lua.LTable]bool{})
	if err != nil {
		return "", fmt.Errorf("encode: %v", err)
	}
	b, _ := json.Marshal(v)
	if ingress {
		annotations := map[string]string{}
		if err := json.Unmarshal(b, &annotations); err != nil {
			return "", fmt.Errorf("decode annotations: %v", err)
		}
		out, _ := json.Marshal(annotations)
		return string(out), nil
	}
	var d data
	if err := json.Unmarshal(b, &d); err != nil {
		return "", fmt.Errorf("decode Data: %v", err)
	}
	out, _ := json.Marshal(d)
	return string(out), nil
}
