//go:build linux

package control_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/uebpf/uebpf/control"
)

// A tool finds an application by pid, and speaks only to a server that
// is that process, running as a uid the tool trusts.
func ExampleDialPID() {
	// The application, here this process, at its default path.
	srv, err := control.Listen(context.Background(), nil)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	socks, err := control.Sockets()
	if err != nil {
		panic(err)
	}
	for _, s := range socks {
		if s.PID == os.Getpid() {
			fmt.Println("listed, running as my uid:", s.UID == os.Getuid())
		}
	}

	c, err := control.DialPID(os.Getpid())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("connected to the pid asked for:", c.PID() == os.Getpid())

	// The same server, asked for as another process, is refused before
	// anything is sent to it.
	_, err = control.Socket{Path: srv.Path(), PID: 1}.Dial()
	fmt.Println("as pid 1:", errors.Is(err, control.ErrUntrusted))
	// Output:
	// listed, running as my uid: true
	// connected to the pid asked for: true
	// as pid 1: true
}
