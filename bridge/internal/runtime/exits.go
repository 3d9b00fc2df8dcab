package runtime

import (
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadExits reads the exit codes the script recorded in dir, by container name (files of the
// job's user only, see OpenOwned). Containers that have not ended are absent.
func ReadExits(dir string, names []string, uid uint32) map[string]int32 {
	out := map[string]int32{}
	for _, n := range names {
		f, err := OpenOwned(filepath.Join(dir, n+".exit"), uid)
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 32); err == nil {
			out[n] = int32(v)
		}
	}
	return out
}

// LogPath is a container's output file in dir.
func LogPath(dir, container string) string { return filepath.Join(dir, container+".log") }
