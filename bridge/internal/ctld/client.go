// Package ctld dials tessera-ctld's public gRPC API (tessera.v1.Controller) as the C++ clients
// do: a munge credential on every call, TLS verified against TlsCaFile when configured.
package ctld

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/munge"
)

// maxResponseBytes is the clients' receive bound (rpc/message_limits.h kMaxResponseBytes).
const maxResponseBytes = 256 << 20

// Options say where ctld is and how to reach it.
type Options struct {
	Addr       string // host:port (SlurmctldHost or ControlAddr, SlurmctldPort)
	TLSCAFile  string // "" = plaintext; else verify ctld's certificate against this CA
	ServerName string // TLS name to verify ("" = the host of Addr)
	Encoder    munge.Encoder
}

// Dial returns a client connection; it does not block on connecting.
func Dial(o Options) (pb.ControllerClient, *grpc.ClientConn, error) {
	if o.Addr == "" {
		return nil, nil, fmt.Errorf("no tessera-ctld address (--ctld host:port)")
	}
	tc := insecure.NewCredentials()
	if o.TLSCAFile != "" {
		pem, err := os.ReadFile(o.TLSCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", o.TLSCAFile)
		}
		tc = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: o.ServerName,
			MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(o.Addr,
		grpc.WithTransportCredentials(tc),
		grpc.WithPerRPCCredentials(munge.PerRPC{Enc: o.Encoder}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseBytes)))
	if err != nil {
		return nil, nil, fmt.Errorf("tessera-ctld at %s: %w", o.Addr, err)
	}
	return pb.NewControllerClient(conn), conn, nil
}
