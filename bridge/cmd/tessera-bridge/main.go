// tessera-bridge: a virtual kubelet that runs Kubernetes pods as Tessera jobs (DESIGN.md §10).
// One virtual node per exported partition; pods bound to it become jobs submitted through
// tessera-ctld's public gRPC API with a munge credential; status, deletion and logs go back.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vkslog "github.com/virtual-kubelet/virtual-kubelet/log/slog"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/tessera-hpc/tessera/bridge/internal/ctld"
	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/munge"
	"github.com/tessera-hpc/tessera/bridge/internal/podgroup"
	"github.com/tessera-hpc/tessera/bridge/internal/provider"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

// version is set at build time (scripts/build-bridge: -X main.version=<the CMake project version>).
var version = "dev"

type flags struct {
	kubeconfig, ctldAddr, ctldCA, ctldName, mungeSocket, mappingPath  string
	partitions, nodePrefix, nodeIP, listen, tlsCert, tlsKey, clientCA string
	trun, tesseraConf, podman, podmanRuntime                          string
	maxPods                                                           int64
	poll, nodeStatusPeriod                                            time.Duration
	kubeQPS                                                           float64
	kubeBurst                                                         int
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the bridge's identity")
	flag.StringVar(&f.ctldAddr, "ctld", "", "tessera-ctld host:port")
	flag.StringVar(&f.ctldCA, "ctld-tls-ca", "", "CA to verify tessera-ctld with (TlsCaFile); empty = plaintext")
	flag.StringVar(&f.ctldName, "ctld-tls-name", "", "TLS name of tessera-ctld (default: its host)")
	flag.StringVar(&f.mungeSocket, "munge-socket", "", "munged socket (AuthInfo=socket=...); empty = default")
	flag.StringVar(&f.mappingPath, "mapping", "", "namespace -> user/account mapping file (required)")
	flag.StringVar(&f.partitions, "partitions", "", "partitions to export, comma-separated (default: all that are up)")
	flag.StringVar(&f.nodePrefix, "node-prefix", "tessera-", "virtual node name = prefix + partition")
	flag.StringVar(&f.nodeIP, "node-ip", "127.0.0.1", "address the apiserver reaches the kubelet API at")
	flag.StringVar(&f.listen, "listen", ":10250", "kubelet API (HTTPS) listen address")
	flag.StringVar(&f.tlsCert, "tls-cert", "", "kubelet API serving certificate")
	flag.StringVar(&f.tlsKey, "tls-key", "", "kubelet API serving key")
	flag.StringVar(&f.clientCA, "client-ca", "", "CA of the apiserver's kubelet client certificate (required with --tls-cert)")
	flag.StringVar(&f.podman, "podman", "podman", "podman on the nodes (namespaces mapped to runtime: podman)")
	flag.StringVar(&f.podmanRuntime, "podman-runtime", "", "OCI runtime podman uses on the nodes (its --runtime; empty = podman's default)")
	flag.Int64Var(&f.maxPods, "max-pods", 1000, "pods capacity of each virtual node")
	// client-go's defaults (5/s, bursts of 10) would queue a pod group's status updates for
	// minutes; a kubelet's are 50 and 100.
	flag.Float64Var(&f.kubeQPS, "kube-api-qps", 50, "requests per second to the apiserver")
	flag.IntVar(&f.kubeBurst, "kube-api-burst", 100, "bursts of requests to the apiserver")
	flag.DurationVar(&f.poll, "poll", 5*time.Second, "how often every followed job is re-read from tessera-ctld "+
		"(changes are followed as they happen through WatchJobs; this catches pending reasons, which have no event)")
	flag.DurationVar(&f.nodeStatusPeriod, "node-status-period", 10*time.Second,
		"how often each virtual node's capacity, allocatable and conditions are re-read from tessera-ctld")
	flag.StringVar(&f.trun, "trun", "trun", "trun on the Tessera nodes: a pod group's gang job runs its pods through it")
	flag.StringVar(&f.tesseraConf, "tessera-conf", os.Getenv("TESSERA_CONF"),
		"TESSERA_CONF given to gang jobs (trun reads it); empty = the nodes' default")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("tessera-bridge", version)
		os.Exit(0)
	}
	return f
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	vklog.L = vkslog.FromSlog(logger)
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "tessera-bridge:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	if f.mappingPath == "" {
		return errors.New("--mapping is required: the namespace -> Tessera user table")
	}
	table, err := mapping.Load(f.mappingPath, mapping.SystemUsers)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	api, conn, err := ctld.Dial(ctld.Options{Addr: f.ctldAddr, TLSCAFile: f.ctldCA, ServerName: f.ctldName,
		Encoder: munge.Command{Socket: f.mungeSocket}})
	if err != nil {
		return err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := api.Ping(cctx, &pb.PingRequest{}); err != nil {
		return fmt.Errorf("tessera-ctld at %s: %w", f.ctldAddr, err)
	}
	parts, err := exportedPartitions(cctx, api, f.partitions)
	if err != nil {
		return err
	}
	client, dyn, err := kubeClient(f.kubeconfig, f.kubeQPS, f.kubeBurst)
	// nodeutil.NewNode builds a default client from $KUBECONFIG before taking ours: point it at
	// the same file so it does not warn about a missing in-cluster configuration.
	os.Setenv("KUBECONFIG", f.kubeconfig)
	if err != nil {
		return err
	}
	pods := provider.NewPods(api, table)
	pods.Runtime = runtime.Config{Podman: f.podman, OCIRuntime: f.podmanRuntime}
	pods.EnableGroups(podgroup.Dynamic{Client: dyn}, podgroup.Options{Trun: f.trun, TesseraConf: f.tesseraConf})
	events := record.NewBroadcaster()
	defer events.Shutdown()
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	pods.SetRecorder(events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "tessera-bridge"}))
	n, err := pods.Adopt(cctx)
	if err != nil {
		return err
	}
	vklog.G(ctx).Infof("partitions %v; %d jobs of pods already in tessera-ctld", parts, n)
	nodes, err := newNodes(ctx, f, client, pods, parts)
	if err != nil {
		return err
	}
	stopHTTP, err := serveKubeletAPI(f, pods)
	if err != nil {
		return err
	}
	defer stopHTTP()
	go pods.Follow(ctx, f.poll)
	errs := make(chan error, len(nodes))
	for _, nd := range nodes {
		go func(nd *nodeutil.Node) { errs <- nd.Run(ctx) }(nd)
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// exportedPartitions: the named ones (each must exist), or every partition that is up.
func exportedPartitions(ctx context.Context, api pb.ControllerClient, want string) ([]string, error) {
	resp, err := api.ListPartitions(ctx, &pb.ListPartitionsRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing partitions: %w", err)
	}
	known := map[string]bool{}
	var all []string
	for _, p := range resp.GetPartitions() {
		known[p.GetName()] = true
		if p.GetUp() {
			all = append(all, p.GetName())
		}
	}
	if want == "" {
		return all, nil
	}
	var out []string
	for _, p := range strings.Split(want, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !known[p] {
			return nil, fmt.Errorf("--partitions: tessera-ctld has no partition %q", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// kubeClient: the typed client, and the dynamic one that reads PodGroup objects.
func kubeClient(path string, qps float64, burst int) (kubernetes.Interface, dynamic.Interface, error) {
	if path == "" {
		return nil, nil, errors.New("--kubeconfig (or KUBECONFIG) is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	d, err := dynamic.NewForConfig(cfg)
	return c, d, err
}

// newNodes makes one virtual node per partition, all reporting the same kubelet port.
func newNodes(ctx context.Context, f flags, client kubernetes.Interface, pods *provider.Pods,
	parts []string) ([]*nodeutil.Node, error) {
	_, port, err := net.SplitHostPort(f.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", f.listen, err)
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: port %q is not a number", f.listen, port)
	}
	var nodes []*nodeutil.Node
	for _, part := range parts {
		nd, err := newNode(ctx, f, client, pods, part, int32(portNum))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, nd)
	}
	return nodes, nil
}

func newNode(ctx context.Context, f flags, client kubernetes.Interface, pods *provider.Pods,
	part string, port int32) (*nodeutil.Node, error) {
	name := f.nodePrefix + part
	return nodeutil.NewNode(name, func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		n := pc.Node
		n.Labels["tessera.io/partition"] = part
		n.Labels["kubernetes.io/os"] = "linux"
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: f.nodeIP}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
		n.Status.NodeInfo = corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64",
			KubeletVersion: "tessera-bridge", OSImage: "Tessera partition " + part}
		ns := pods.NewNodeStatus(ctx, n, part, f.maxPods)
		go ns.Run(ctx, f.nodeStatusPeriod)
		return pods.Node(name, part), ns, nil
	}, nodeutil.WithClient(client), func(c *nodeutil.NodeConfig) error {
		c.NumWorkers = 4
		return nil
	})
}

// serveKubeletAPI serves logs and exec (and answers attach "not supported") over HTTPS to clients
// with a certificate from --client-ca (the apiserver's kubelet client certificate).
func serveKubeletAPI(f flags, pods *provider.Pods) (func(), error) {
	if f.tlsCert == "" {
		vklog.L.Warn("no --tls-cert: the kubelet API (kubectl logs) is not served")
		return func() {}, nil
	}
	if f.clientCA == "" {
		return nil, errors.New("--tls-cert needs --client-ca: only the apiserver may read pods' logs")
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	pem, err := os.ReadFile(f.clientCA)
	if err != nil {
		return nil, fmt.Errorf("--client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca %s holds no PEM certificate", f.clientCA)
	}
	all := pods.Node("", "")
	h := api.PodHandler(api.PodHandlerConfig{
		RunInContainer: all.RunInContainer, AttachToContainer: all.AttachToContainer,
		GetContainerLogs: all.GetContainerLogs, GetPods: pods.AllPods,
		GetPodsFromKubernetes: pods.AllPods, GetStatsSummary: all.GetStatsSummary,
		GetMetricsResource: all.GetMetricsResource, PortForward: all.PortForward,
	}, false)
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	l, err := tls.Listen("tcp", f.listen, tc)
	if err != nil {
		return nil, fmt.Errorf("kubelet API on %s: %w", f.listen, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }, nil
}
