package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
)

// ServeStdio proxies one client connection, read from in and written to
// out (a process's stdin and stdout, under ssh), to the control socket
// s, until either side closes or ctx is done. It is what
// "uebpf trace --stdio" runs on a remote machine: ssh authenticates and
// carries the bytes, and the socket's own checks still apply to the
// process running ServeStdio. The server is checked as Socket.Dial
// checks it, before a byte of in is sent to it.
func ServeStdio(ctx context.Context, s Socket, in io.Reader, out io.Writer) error {
	c, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	fromClient, fromServer := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := io.Copy(c, in)
		// The client is done sending: let the server see EOF, and keep
		// copying its last replies out.
		c.CloseWrite()
		fromClient <- err
	}()
	go func() {
		_, err := io.Copy(out, c)
		fromServer <- err
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("control: stdio: %w", ctx.Err())
	case err = <-fromServer:
		// The server hung up. The copy from in ends at its next read
		// (it cannot be interrupted; a process exits anyway).
	case err = <-fromClient:
		if err == nil {
			select {
			case err = <-fromServer:
			case <-ctx.Done():
				return fmt.Errorf("control: stdio: %w", ctx.Err())
			}
		}
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("control: stdio: %w", err)
	}
	return nil
}
