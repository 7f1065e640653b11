package main

import (
	"flag"
	"fmt"
	"runtime/debug"
)

var versionCommand = &command{
	name: "version", args: "", summary: "print the tool's version and the source revision it was built from",
	maxArgs: 0,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		return func([]string) error {
			fmt.Fprintln(e.stdout, versionLine(debug.ReadBuildInfo()))
			return nil
		}
	},
}

// versionLine describes a build: the module version, then the VCS revision,
// its time and whether the tree had uncommitted changes, when the build
// recorded them.
func versionLine(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "interlude (no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	line := "interlude " + v
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", with uncommitted changes"
			}
		}
	}
	if rev != "" {
		line += fmt.Sprintf(" (revision %s", rev[:min(12, len(rev))])
		if at != "" {
			line += " of " + at
		}
		line += dirty + ")"
	}
	return line + ", " + info.GoVersion
}
