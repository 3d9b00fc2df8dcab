// Package munge creates munge credentials the way Tessera's C++ clients do (rpc/munge_codec.cc:
// munge_encode of an empty payload, against munged's default socket or a given one) and
// attaches a fresh one to every gRPC call in the `x-tessera-munge` metadata entry
// (rpc/grpc_util.cc AttachCredential).
//
// It runs the `munge` command of the munge package (no cgo): `munge -n [-S socket]` prints
// exactly the credential munge_encode returns for an empty payload.
package munge

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// MetadataKey is the gRPC metadata entry that carries the credential (rpc/grpc_util.h).
const MetadataKey = "x-tessera-munge"

// Encoder makes a fresh credential for the calling process's uid/gid.
type Encoder interface {
	Encode(ctx context.Context) (string, error)
}

// Command encodes with the munge command. Socket "" = munge's compiled-in default.
type Command struct {
	Binary string // "" = "munge" from PATH
	Socket string
}

// Encode runs `munge -n [-S socket]`. Errors name the socket, as the C++ codec does.
func (c Command) Encode(ctx context.Context) (string, error) {
	bin := c.Binary
	if bin == "" {
		bin = "munge"
	}
	args := []string{"-n"}
	if c.Socket != "" {
		args = append(args, "-S", c.Socket)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		where := ""
		if c.Socket != "" {
			where = " at " + c.Socket
		}
		return "", fmt.Errorf("cannot create munge credential (is munged running%s?): %v: %s",
			where, err, strings.TrimSpace(stderr.String()))
	}
	cred := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(cred, "MUNGE:") {
		return "", fmt.Errorf("munge printed no credential: %q", cred)
	}
	return cred, nil
}

// PerRPC is a grpc credentials.PerRPCCredentials that puts a fresh credential on each call.
type PerRPC struct {
	Enc Encoder
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (p PerRPC) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	cred, err := p.Enc.Encode(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]string{MetadataKey: cred}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: munge authenticates the
// caller; TLS is used when configured, as the C++ clients do.
func (PerRPC) RequireTransportSecurity() bool { return false }
