package storekit

import (
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

// row is a Scanner over fixed values, as a SQL row would hand them over.
type row []any

func (r row) Scan(dest ...any) error {
	for i, d := range dest {
		switch d := d.(type) {
		case *string:
			*d = r[i].(string)
		case *int64:
			*d = r[i].(int64)
		case *[]byte:
			*d = r[i].([]byte)
		}
	}
	return nil
}

func TestScanMetaReadsTheRowAsTheSQLStoresWriteIt(t *testing.T) {
	created := time.Date(2026, 12, 3, 10, 0, 0, 5, time.UTC)
	updated := created.Add(time.Minute)
	questions, err := EncodeInterrupts([]interlude.Interruption{{ID: "int_1", Message: "Refund?"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, threadID string
		row            row
	}{
		{"by id", "t1", row{"refund", "interrupted", int64(3), questions, UnixNano(created), UnixNano(updated)}},
		{"in a listing", "", row{"t1", "refund", "interrupted", int64(3), questions, UnixNano(created), UnixNano(updated)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ScanMeta(tc.row, "sqlite", tc.threadID)
			if err != nil {
				t.Fatal(err)
			}
			if m.ThreadID != "t1" || m.Graph != "refund" || m.Status != interlude.ThreadInterrupted || m.Version != 3 ||
				!m.CreatedAt.Equal(created) || !m.UpdatedAt.Equal(updated) || m.CreatedAt.Location() != time.UTC ||
				len(m.Interrupts) != 1 || m.Interrupts[0].ID != "int_1" {
				t.Errorf("scanned %+v", m)
			}
		})
	}
}

func TestScanMetaNamesTheStoreAndThreadOfUnreadableInterrupts(t *testing.T) {
	_, err := ScanMeta(row{"refund", "interrupted", int64(1), []byte("{not json"), int64(0), int64(0)}, "postgres", "t9")
	if err == nil || !strings.Contains(err.Error(), "postgres store") || !strings.Contains(err.Error(), `"t9"`) {
		t.Fatalf("error %v, want one naming the postgres store and thread t9", err)
	}
}
