package langgraph

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// graphNamespace is the namespace LangGraph derives a graph's system
// assistant id from (the standard URL namespace of RFC 9562).
var graphNamespace = [16]byte{0x6b, 0xa7, 0xb8, 0x21, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// AssistantID is the id of a graph's assistant: uuid5 of its name in
// LangGraph's namespace, the id LangGraph's own servers give it.
func AssistantID(graphName string) string {
	h := sha1.New()
	h.Write(graphNamespace[:])
	h.Write([]byte(graphName))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

// formatUUID writes u in the usual 8-4-4-4-12 form, in one allocation.
func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	hex.Encode(b[9:13], u[4:6])
	hex.Encode(b[14:18], u[6:8])
	hex.Encode(b[19:23], u[8:10])
	hex.Encode(b[24:36], u[10:16])
	b[8], b[13], b[18], b[23] = '-', '-', '-', '-'
	return string(b[:])
}

// newUUID returns a new thread or run id: a version 7 uuid (RFC 9562), its
// first 48 bits the Unix milliseconds and the rest random. Ids made later sort
// after, so that the store files a new thread's rows (its record, log,
// snapshots and documents, all keyed by thread id first) at the end of each
// table, beside the other new threads', rather than on a random page: a commit
// of many new threads then writes a few pages instead of a few per thread.
func newUUID() string { return uuidAt(time.Now()) }

// uuidAt is a version 7 uuid of the time t.
func uuidAt(t time.Time) string {
	var u [16]byte
	rand.Read(u[6:])
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

// checkpointID names a thread version as LangGraph clients expect: a
// uuid-shaped id that sorts by time. Its first 48 bits are the commit's Unix
// milliseconds and its last 60 the version, which parseCheckpointID reads back.
func checkpointID(version int64, at time.Time) string {
	ms := uint64(at.UnixMilli())
	v := uint64(version)
	return fmt.Sprintf("%08x-%04x-6000-%04x-%012x", ms>>16, ms&0xffff, 0x8000|(v>>48)&0x0fff, v&0xffffffffffff)
}

// parseCheckpointID returns the thread version a checkpoint id names.
func parseCheckpointID(id string) (int64, bool) {
	parts := strings.Split(id, "-")
	if len(parts) != 5 || len(parts[3]) != 4 || len(parts[4]) != 12 {
		return 0, false
	}
	hi, err1 := strconv.ParseUint(parts[3], 16, 16)
	lo, err2 := strconv.ParseUint(parts[4], 16, 64)
	if err1 != nil || err2 != nil || hi&0x8000 == 0 {
		return 0, false
	}
	return int64((hi&0x0fff)<<48 | lo), true
}

// interruptID is the LangGraph id of an interrupt made of Interlude's
// interrupts ids (one, or an agent turn's approvals): 32 lowercase hex digits,
// the shape LangGraph's interrupt ids have, derived from the ids so that it
// needs no storage and a stale one never matches a later question.
func interruptID(ids ...string) string {
	var b [34]byte
	return string(appendInterruptID(b[:0], ids...)[1:33])
}

// interruptIDPrefix opens what interruptID hashes.
const interruptIDPrefix = "interlude-langgraph:"

// appendInterruptID appends interruptID(ids...) as a JSON string.
func appendInterruptID(b []byte, ids ...string) []byte {
	var buf [128]byte
	in := append(buf[:0], interruptIDPrefix...)
	for i, id := range ids {
		if i > 0 {
			in = append(in, 0)
		}
		in = append(in, id...)
	}
	h := sha256.Sum256(in)
	b = append(b, '"')
	b = hex.AppendEncode(b, h[:16])
	return append(b, '"')
}

// taskID is the id of a node's pending task at a checkpoint.
func taskID(threadID string, version int64, node string) string {
	h := sha1.New()
	h.Write(graphNamespace[:])
	fmt.Fprintf(h, "%s\x00%d\x00%s", threadID, version, node)
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}
