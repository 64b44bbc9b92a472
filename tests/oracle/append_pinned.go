//go:build !gopherlua2017

package main

import lua "github.com/yuin/gopher-lua"

// appendItem is LTable.Append, which skips nil in the gopher-lua the controller pins: JSON nulls
// inside lists vanish.
func appendItem(t *lua.LTable, v lua.LValue) {
	t.Append(v)
}
