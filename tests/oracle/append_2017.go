//go:build gopherlua2017

package main

import lua "github.com/yuin/gopher-lua"

// appendItem skips nil as the controller's gopher-lua does: the 2017 snapshot's LTable.Append
// would append it as a hole, and turn [1, null, 2] into a sparse table the controller never sees.
func appendItem(t *lua.LTable, v lua.LValue) {
	if v != lua.LNil {
		t.Append(v)
	}
}
