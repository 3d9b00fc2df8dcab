package provider

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

// containerLogs reads the job's output file (JobInfo.stdout_path, as ctld resolved it; the
// bridge must see the same file system as the node that ran the job). --tail keeps the last
// lines; --limit-bytes cuts; -f follows the file until the job ends.
func (p *Pods) containerLogs(ctx context.Context, ns, name, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	t, err := p.lookup(ns, name, "")
	if err != nil {
		return nil, err
	}
	if t.jobID == 0 { // a pod group's member waiting for its group
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	job, err := p.api.GetJob(ctx, &pb.GetJobRequest{JobId: t.jobID})
	if err != nil {
		return nil, fmt.Errorf("Tessera job %d of pod %s/%s: %w", t.jobID, ns, name, err)
	}
	path := p.logPath(t.pod, job, container)
	if t.member != nil { // a gang member's task writes its own file (members are never wrapped)
		path = t.member.out
	}
	if path == "" || job.GetState() == pb.JobState_PENDING {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	data, err := readOwned(path, job.GetUid())
	if err != nil {
		if os.IsNotExist(err) {
			return io.NopCloser(bytes.NewReader(nil)), nil
		}
		return nil, fmt.Errorf("output of Tessera job %d: %w", t.jobID, err)
	}
	data = tailLines(data, opts.Tail)
	if opts.LimitBytes > 0 && len(data) > opts.LimitBytes {
		data = data[:opts.LimitBytes]
	}
	if !opts.Follow || terminal(job.GetState()) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	pr, pw := io.Pipe()
	go p.follow(ctx, pw, path, job.GetUid(), t.jobID, data)
	return pr, nil
}

// follow writes what is already read, then what the file grows by, until the job ends.
func (p *Pods) follow(ctx context.Context, w *io.PipeWriter, path string, uid uint32, jobID uint64, first []byte) {
	if _, err := w.Write(first); err != nil {
		w.CloseWithError(err)
		return
	}
	f, err := runtime.OpenOwned(path, uid)
	if err != nil {
		w.CloseWithError(err)
		return
	}
	defer f.Close()
	st, _ := f.Stat()
	if _, err := f.Seek(st.Size(), io.SeekStart); err != nil {
		w.CloseWithError(err)
		return
	}
	r := bufio.NewReader(f)
	for {
		if _, err := io.Copy(w, r); err != nil {
			w.CloseWithError(err)
			return
		}
		job, err := p.api.GetJob(ctx, &pb.GetJobRequest{JobId: jobID})
		if err != nil || terminal(job.GetState()) {
			_, _ = io.Copy(w, r)
			w.Close()
			return
		}
		select {
		case <-ctx.Done():
			w.Close()
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readOwned reads a file the job's user wrote (runtime.OpenOwned: no links, no other owner's
// file: the bridge runs as root).
func readOwned(path string, uid uint32) ([]byte, error) {
	f, err := runtime.OpenOwned(path, uid)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// tailLines keeps the last n lines (n <= 0: all).
func tailLines(data []byte, n int) []byte {
	if n <= 0 {
		return data
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}
