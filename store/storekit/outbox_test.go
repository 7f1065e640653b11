package storekit

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/interludehq/interlude/store"
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

func TestNoticesAreClaimedByWhenTheyFallDueThenAsWritten(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ns := []store.Notice{
		{Seq: 4, NextAt: at},
		{Seq: 1, NextAt: at.Add(time.Second)},
		{Seq: 3, NextAt: at},
		{Seq: 2, NextAt: at.Add(-time.Second)},
	}
	slices.SortFunc(ns, CompareDue)
	var got []int64
	for _, n := range ns {
		got = append(got, n.Seq)
	}
	if want := []int64{2, 3, 4, 1}; !slices.Equal(got, want) {
		t.Fatalf("claimed in the order %v, want %v", got, want)
	}
}
