package fakeec2

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// ListenAndServe serves s on addr until ctx ends or serving fails, then closes s. listening,
// when not nil, hears the bound address once requests can arrive (addr may name port 0).
// `karplab ec2 serve` and the container image's command (fakeec2/container/emulator) both run it.
func (s *Server) ListenAndServe(ctx context.Context, addr string, listening func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Join(fmt.Errorf("listening on %s: %w", addr, err), s.Close())
	}
	if listening != nil {
		listening(l.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	select {
	case err := <-served:
		return errors.Join(err, s.Close())
	case <-ctx.Done():
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("stopping the EC2 emulator: %w", err)
	}
	return <-served
}
