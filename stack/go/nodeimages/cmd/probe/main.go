// Command probe is the test image of the local stack's node: a few things a container can do without a shell.
//
//	probe echo WORDS...        print WORDS, exit 0
//	probe exit CODE WORDS...   print WORDS, exit CODE
//	probe apiget PATH...       GET each PATH from the API server with the pod's ServiceAccount token and print
//	                           "GET PATH STATUS"; exit 0 when every answer came (whatever its status)
//	probe apiget-wait PATH...  the same, then wait for SIGTERM (a Deployment's pod stays Running)
//	probe wait                 wait for SIGTERM, exit 0
//	probe connect HOST:PORT    open a TCP connection (5 s at most) and print "connect HOST:PORT ok" or the error;
//	                           exit 0 either way (what a pod's network reaches is the test's question)
//	probe addrs                print the pod's addresses and whether it has a default route
//
// The API server is the one in-cluster clients use, KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT; apiget
// refuses any address that is neither loopback nor on a network the pod is attached to (the stack's network rule:
// nothing leaves the machine; a pod of the node's Pod network reaches the API server through the bridge's gateway).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) < 2 {
		fail(2, "usage: probe echo|exit|apiget|apiget-wait|wait ...")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "echo":
		fmt.Println(strings.Join(args, " "))
	case "exit":
		if len(args) < 1 {
			fail(2, "usage: probe exit CODE WORDS...")
		}
		code, err := strconv.Atoi(args[0])
		if err != nil {
			fail(2, "exit code: "+err.Error())
		}
		fmt.Println(strings.Join(args[1:], " "))
		os.Exit(code)
	case "wait":
		wait()
	case "connect":
		if len(args) != 1 {
			fail(2, "usage: probe connect HOST:PORT")
		}
		conn, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			fmt.Printf("connect %s failed: %v\n", args[0], err)
			return
		}
		conn.Close()
		fmt.Printf("connect %s ok\n", args[0])
	case "addrs":
		addrs()
	case "apiget", "apiget-wait":
		if err := apiget(args); err != nil {
			fail(1, err.Error())
		}
		if os.Args[1] == "apiget-wait" {
			wait()
		}
	default:
		fail(2, "unknown command "+os.Args[1])
	}
}

func apiget(paths []string) error {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if ip := net.ParseIP(host); ip == nil || !(ip.IsLoopback() || attached(ip)) {
		return fmt.Errorf("refusing API server address %q: neither loopback nor on the pod's own network", host)
	}
	token, err := os.ReadFile(saDir + "/token")
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(saDir + "/ca.crt")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no certificate in %s/ca.crt", saDir)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	base := "https://" + net.JoinHostPort(host, port)
	for _, path := range paths {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("GET %s %d\n", path, resp.StatusCode)
	}
	return nil
}

// attached tells whether ip lies on a network one of the pod's interfaces is on (reached without a router).
func attached(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.Contains(ip) {
			return true
		}
	}
	return false
}

// addrs prints each interface address and "default route: yes|no" (from /proc/net/route: destination 00000000).
func addrs() {
	list, err := net.InterfaceAddrs()
	if err != nil {
		fail(1, err.Error())
	}
	for _, a := range list {
		fmt.Println("addr " + a.String())
	}
	routes, err := os.ReadFile("/proc/net/route")
	if err != nil {
		fail(1, err.Error())
	}
	found := "no"
	for _, line := range strings.Split(string(routes), "\n")[1:] {
		if fields := strings.Fields(line); len(fields) > 1 && fields[1] == "00000000" {
			found = "yes"
		}
	}
	fmt.Println("default route: " + found)
}

func wait() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "probe: "+msg)
	os.Exit(code)
}
