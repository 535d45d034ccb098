// Command probe is the test image of the local stack's node: a few things a container can do without a shell.
//
//	probe echo WORDS...        print WORDS, exit 0
//	probe exit CODE WORDS...   print WORDS, exit CODE
//	probe apiget PATH...       GET each PATH from the API server with the pod's ServiceAccount token and print
//	                           "GET PATH STATUS"; exit 0 when every answer came (whatever its status)
//	probe apiget-wait PATH...  the same, then wait for SIGTERM (a Deployment's pod stays Running)
//	probe wait                 wait for SIGTERM, exit 0
//
// The API server is the one in-cluster clients use, KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT; the
// probe refuses any address that is not loopback (the stack's network rule: nothing leaves the machine).
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
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing API server address %q: not a loopback IP", host)
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

func wait() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "probe: "+msg)
	os.Exit(code)
}
