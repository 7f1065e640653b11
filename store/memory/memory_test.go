package memory

import (
	"testing"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := New()
		t.Cleanup(func() { s.Close() })
		return s
	}, storetest.Options{
		SetRecordFormat: func(st store.Store, threadID string, version int64, format int) error {
			s := st.(*Store)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.threads[threadID].records[version-1].Format = format
			return nil
		},
		SetSnapshotFormat: func(st store.Store, threadID string, format int) error {
			s := st.(*Store)
			s.mu.Lock()
			defer s.mu.Unlock()
			for i := range s.threads[threadID].snapshots {
				s.threads[threadID].snapshots[i].Format = format
			}
			return nil
		},
	})
}
