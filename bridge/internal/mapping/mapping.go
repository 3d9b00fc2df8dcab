// Package mapping reads the admin-written table that maps Kubernetes namespaces to Tessera
// accounts and Unix users. A pod of a namespace that is not in the table is refused; a pod never
// chooses its uid: the job runs as the namespace's user.
//
// File format (YAML or JSON):
//
//	namespaces:
//	  team-a:
//	    user: alice            # Unix user the jobs run as (must exist on ctld's host)
//	    account: research      # Tessera account ("" = the user's default)
//	    workdir: /home/alice   # absolute; the job's working directory when the container names none
//	    outputDir: /home/alice/k8s   # absolute; where job output files go ("" = workdir)
//	    qos: normal            # default QoS ("" = the account's default)
//	    priorityClassQOS:      # priorityClassName -> QoS
//	      high-priority: high
//	    runtime: podman        # how containers run: host (default: the command on the node) or
//	                           # podman (the image, rootless, as the user, in the job's cgroup)
package mapping

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"

	"sigs.k8s.io/yaml"
)

// Entry is one namespace's mapping.
type Entry struct {
	User             string            `json:"user"`
	Account          string            `json:"account,omitempty"`
	Workdir          string            `json:"workdir,omitempty"`
	OutputDir        string            `json:"outputDir,omitempty"`
	QOS              string            `json:"qos,omitempty"`
	PriorityClassQOS map[string]string `json:"priorityClassQOS,omitempty"`
	Runtime          string            `json:"runtime,omitempty"` // RuntimeHost ("" too) or RuntimePodman
	// UID is resolved from User when the table is loaded.
	UID uint32 `json:"-"`
}

// The container runtimes a namespace can be given.
const (
	RuntimeHost   = "host"
	RuntimePodman = "podman"
)

// Table is the whole file.
type Table struct {
	Namespaces map[string]Entry `json:"namespaces"`
	Path       string           `json:"-"`
}

// UserLookup resolves a user name to a uid (os/user in production, a fake in tests).
type UserLookup func(name string) (uint32, error)

// SystemUsers resolves through the system's user database.
func SystemUsers(name string) (uint32, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(id), err
}

// Load reads and validates the file: every entry names a user that resolves, paths are
// absolute. Errors name the file and the namespace.
func Load(path string, lookup UserLookup) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("namespace mapping: %w", err)
	}
	return Parse(path, data, lookup)
}

// Parse is Load on bytes already read (path only names them in errors).
func Parse(path string, data []byte, lookup UserLookup) (*Table, error) {
	t := &Table{Path: path}
	if err := yaml.UnmarshalStrict(data, t); err != nil {
		return nil, fmt.Errorf("namespace mapping %s: %w", path, err)
	}
	names := make([]string, 0, len(t.Namespaces))
	for ns := range t.Namespaces {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		e := t.Namespaces[ns]
		where := fmt.Sprintf("namespace mapping %s: namespace %q", path, ns)
		if e.User == "" {
			return nil, fmt.Errorf("%s: no user", where)
		}
		uid, err := lookup(e.User)
		if err != nil {
			return nil, fmt.Errorf("%s: user %q: %v", where, e.User, err)
		}
		if uid == 0 {
			return nil, fmt.Errorf("%s: user %q is root; pods never run as root", where, e.User)
		}
		for field, p := range map[string]string{"workdir": e.Workdir, "outputDir": e.OutputDir} {
			if p != "" && !filepath.IsAbs(p) {
				return nil, fmt.Errorf("%s: %s %q is not an absolute path", where, field, p)
			}
		}
		switch e.Runtime {
		case "", RuntimeHost, RuntimePodman:
		default:
			return nil, fmt.Errorf("%s: runtime %q is not one of %q, %q", where, e.Runtime,
				RuntimeHost, RuntimePodman)
		}
		e.UID = uid
		t.Namespaces[ns] = e
	}
	return t, nil
}

// Lookup returns the namespace's entry, or an error saying it is not mapped.
func (t *Table) Lookup(namespace string) (Entry, error) {
	e, ok := t.Namespaces[namespace]
	if !ok {
		return Entry{}, fmt.Errorf("namespace %q is not mapped to a Tessera user in %s; "+
			"the cluster admin must add it", namespace, t.Path)
	}
	return e, nil
}
