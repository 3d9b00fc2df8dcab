package runtime

// kubectl exec: a command run beside a pod's running job, in the job's cgroups, as the job's
// user, with the task's environment. The bridge must run on the node that runs the job (as for
// logs, which need its file system): it finds a process of the job in /proc, starts the command
// as the job's user held on a pipe, writes its pid into each of the task's cgroups, then lets
// it exec the command.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoTask: no process of the job runs on this host.
var ErrNoTask = errors.New("no process of the job runs on the bridge's host")

// Task is one running process of a pod's job.
type Task struct {
	PID     int
	Env     []string // its environment (KEY=VALUE)
	Cwd     string
	Cgroups []string // the cgroup.procs files of its cgroups, one per hierarchy
}

// FindTask finds a process of job jobID run for pod podUID under procRoot (/proc): owned by uid,
// KUBERNETES_POD_UID=podUID in its environment, in a cgroup named job_<jobID>. A process whose
// environment also names `container` (KUBERNETES_CONTAINER_NAME, set by Script) is preferred.
func FindTask(procRoot, podUID string, jobID, uid uint64, container string) (*Task, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	wantEnv := []byte("KUBERNETES_POD_UID=" + podUID + "\x00")
	wantCg := fmt.Sprintf("/job_%d", jobID)
	var best *Task
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || uint64(st.Uid) != uid {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, wantEnv...)) {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(dir, "cgroup"))
		if err != nil || !inJobCgroup(string(cg), wantCg) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		files, err := procsFiles(string(cg), procRoot)
		if err != nil {
			return nil, err
		}
		t := &Task{PID: pid, Env: splitEnv(env), Cwd: cwd, Cgroups: files}
		if container != "" && bytes.Contains(env, []byte("KUBERNETES_CONTAINER_NAME="+container+"\x00")) {
			return t, nil
		}
		if best == nil {
			best = t
		}
	}
	if best == nil {
		return nil, ErrNoTask
	}
	return best, nil
}

// inJobCgroup: a line of /proc/PID/cgroup ends in, or passes through, <want> (".../job_<id>").
func inJobCgroup(cgroup, want string) bool {
	for _, line := range strings.Split(cgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (strings.HasSuffix(parts[2], want) || strings.Contains(parts[2], want+"/")) {
			return true
		}
	}
	return false
}

// procsFiles maps each line of /proc/PID/cgroup ("N:controllers:path") to the cgroup.procs file
// of that hierarchy's mount (from <procRoot>/self/mounts).
func procsFiles(cgroup, procRoot string) ([]string, error) {
	f, err := os.Open(filepath.Join(procRoot, "self", "mounts"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type mnt struct {
		dir  string
		v2   bool
		opts map[string]bool
	}
	var mounts []mnt
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 4 || (fl[2] != "cgroup" && fl[2] != "cgroup2") {
			continue
		}
		m := mnt{dir: fl[1], v2: fl[2] == "cgroup2", opts: map[string]bool{}}
		for _, o := range strings.Split(fl[3], ",") {
			m.opts[o] = true
		}
		mounts = append(mounts, m)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(cgroup), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, m := range mounts {
			match := m.v2 && parts[1] == ""
			if !m.v2 && parts[1] != "" {
				match = true
				for _, c := range strings.Split(parts[1], ",") {
					match = match && m.opts[c]
				}
			}
			if match {
				out = append(out, filepath.Join(m.dir, parts[2], "cgroup.procs"))
				break
			}
		}
	}
	return out, nil
}

func splitEnv(b []byte) []string {
	var out []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			out = append(out, string(kv))
		}
	}
	return out
}

// Size is a terminal's size.
type Size struct{ Width, Height uint16 }

// ExecRequest is one command to run beside a task.
type ExecRequest struct {
	Task     *Task
	UID, GID uint32
	Groups   []uint32 // the user's supplementary groups
	Dir      string   // "" = the task's
	Argv     []string // what to run as the user (PodmanExec builds it for podman)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer // ignored with TTY (the terminal carries both)
	TTY      bool
	Resize   <-chan Size
}

// holdThenExec runs as the user: it waits on fd 3 until the bridge has put it into the task's
// cgroups, then execs the command. Nothing runs as root with the task's environment.
const holdThenExec = `read _ <&3; exec 3<&-; exec "$@"`

// Exec runs the command and returns its exit code (128+signal for a signal).
func Exec(ctx context.Context, r ExecRequest) (int, error) {
	if len(r.Argv) == 0 {
		return 0, errors.New("no command")
	}
	hold, release, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer hold.Close()
	defer release.Close()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", holdThenExec, "sh"}, r.Argv...)...)
	cmd.Env = r.Task.Env
	cmd.Dir = r.Dir
	if cmd.Dir == "" {
		cmd.Dir = r.Task.Cwd
	}
	cmd.ExtraFiles = []*os.File{hold}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: r.UID, Gid: r.GID,
		Groups: r.Groups}}
	var wg sync.WaitGroup
	var master, slave *os.File
	if r.TTY {
		if master, slave, err = openPTY(); err != nil {
			return 0, err
		}
		defer master.Close()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	} else {
		cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
		if r.Stdin != nil {
			in, err := cmd.StdinPipe()
			if err != nil {
				return 0, err
			}
			go func() { _, _ = io.Copy(in, r.Stdin); in.Close() }()
		}
	}
	err = cmd.Start()
	if slave != nil {
		slave.Close() // the child holds the terminal's slave side now
	}
	if err != nil {
		return 0, err
	}
	for _, f := range r.Task.Cgroups {
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, fmt.Errorf("joining the job's cgroup %s: %w", f, err)
		}
	}
	if _, err := release.Write([]byte("\n")); err != nil {
		_ = cmd.Process.Kill()
	}
	release.Close()
	if r.TTY {
		if r.Stdin != nil {
			go func() { _, _ = io.Copy(master, r.Stdin) }()
		}
		if r.Resize != nil {
			go func() {
				for s := range r.Resize {
					_ = unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ,
						&unix.Winsize{Row: s.Height, Col: s.Width})
				}
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = io.Copy(r.Stdout, master) }() // ends with EIO at exit
	}
	err = cmd.Wait()
	wg.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// PodmanExec is the command that runs argv in a podman container of the job.
func PodmanExec(cfg Config, jobID uint64, container string, argv []string, stdin, tty bool) []string {
	out := append(podmanBase(cfg), "exec")
	if stdin {
		out = append(out, "-i")
	}
	if tty {
		out = append(out, "-t")
	}
	out = append(out, ContainerName(jobID, container))
	return append(out, argv...)
}

// openPTY opens a pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// OpenOwned opens a file the job wrote (logs, exit codes), refusing a link or a file that is not
// the job user's: the bridge runs as root and must not read other files for the user.
func OpenOwned(path string, uid uint32) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Uid != uid {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of uid %d", path, uid)
	}
	return f, nil
}
