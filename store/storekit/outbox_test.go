package storekit

import (
	"encoding/json"
	"testing"
)

// A notice's list of destinations is stored as json.Marshal writes it.
func TestDeliveredToIsWhatEncodingJSONWrites(t *testing.T) {
	for _, names := range [][]string{nil, {}, {"webhook https://hooks.example/in?a=1&b=<2>"}, {"slack #ops", "mail \"ops\"", "bad \xff byte", "\u2028"}} {
		want := "[]"
		if len(names) > 0 {
			b, _ := json.Marshal(names)
			want = string(b)
		}
		if got := DeliveredTo(names); got != want {
			t.Errorf("DeliveredTo(%q) = %s, want %s", names, got, want)
		}
	}
}
