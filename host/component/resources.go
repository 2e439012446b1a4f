package component

// maxHandles bounds the live handles of one call: a guest that keeps
// asking for handles without dropping them traps instead of growing the
// host's memory.
const maxHandles = 1 << 16

// handleTable is a component instance's table of resource handles. Index
// 0 is never a handle. Every handle the guest passes is checked: an index
// that is not live, or that holds another resource type, traps.
type handleTable struct {
	entries []handleEntry
	free    []uint32
	live    int
}

type handleEntry struct {
	res  *Resource
	obj  any
	used bool
}

// dropper is implemented by host objects that hold something to release
// when their handle is dropped (a file, a response body).
type dropper interface{ drop() }

func (t *handleTable) add(res *Resource, obj any) uint32 {
	if t.live >= maxHandles {
		trap("more than %d live resource handles", maxHandles)
	}
	if len(t.entries) == 0 {
		t.entries = append(t.entries, handleEntry{})
	}
	var h uint32
	if n := len(t.free); n > 0 {
		h = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		h = uint32(len(t.entries))
		t.entries = append(t.entries, handleEntry{})
	}
	t.entries[h] = handleEntry{res: res, obj: obj, used: true}
	t.live++
	return h
}

func (t *handleTable) get(h uint32, res *Resource) *handleEntry {
	if h == 0 || int(h) >= len(t.entries) || !t.entries[h].used {
		trap("resource handle %d is not a live handle", h)
	}
	e := &t.entries[h]
	if e.res.Key != res.Key {
		trap("resource handle %d is a %s, not a %s", h, e.res.Key, res.Key)
	}
	return e
}

// remove takes a handle out of the table (the guest gives up ownership)
// and returns its object.
func (t *handleTable) remove(h uint32, res *Resource) any {
	e := t.get(h, res)
	obj := e.obj
	*e = handleEntry{}
	t.free = append(t.free, h)
	t.live--
	return obj
}

func (t *handleTable) drop(h uint32, res *Resource) {
	if d, ok := t.remove(h, res).(dropper); ok {
		d.drop()
	}
}

// closeAll releases what the handles still hold when a call ends.
func (t *handleTable) closeAll() {
	for i := range t.entries {
		if t.entries[i].used {
			if d, ok := t.entries[i].obj.(dropper); ok {
				d.drop()
			}
		}
	}
	t.entries, t.free, t.live = nil, nil, 0
}

// liftHandle turns a handle the guest passes into its host object; an own
// handle leaves the table.
func (st *call) liftHandle(h uint32, t *Type) Value {
	if t.Kind == Own {
		return st.handles.remove(h, t.Resource)
	}
	return st.handles.get(h, t.Resource).obj
}

// lowerHandle gives the guest a new own handle for a host object.
func (st *call) lowerHandle(v Value, t *Type) uint32 {
	if t.Kind != Own {
		hostBug("the host passes a borrowed %s", t.Resource.Key)
	}
	return st.handles.add(t.Resource, v)
}
