package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C (SIGINT) and SIGTERM close the control socket: the service
// exits 0 and its socket file is gone, not left for the next server's
// sweep.
func TestSignalRemovesSocket(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	bin := build(t, "github.com/uebpf/uebpf/examples/http-service", runtime.GOARCH)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--control", "--addr", "127.0.0.1:0")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			socket := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if p, ok := strings.CutPrefix(sc.Text(), "control socket "); ok {
						socket <- p
					}
				}
				exited <- cmd.Wait()
			}()
			var path string
			select {
			case path = <-socket:
			case err := <-exited:
				t.Fatalf("the service exited before serving: %v\n%s", err, stderr.String())
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatal("the service did not start")
			}
			if _, err := os.Lstat(path); err != nil {
				t.Fatalf("no socket while serving: %v", err)
			}
			// The signal handler is installed before the socket is
			// announced: signal at once.
			cmd.Process.Signal(sig)
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("exit after %v: %v\n%s", sig, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the service did not exit on %v", sig)
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				os.Remove(path)
				t.Errorf("socket %s left after %v: %v", path, sig, err)
			}
		})
	}
}
