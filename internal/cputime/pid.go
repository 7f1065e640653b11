package cputime

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTick is the unit of the CPU times in /proc/PID/stat and /proc/stat
// (USER_HZ).
const ClockTick = 10 * time.Millisecond

// OfPid returns the user and system CPU time process pid has used so far,
// read from /proc/PID/stat: 0 for pid 0, or where /proc cannot tell (outside
// Linux, or once the process is gone).
func OfPid(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * ClockTick
}
