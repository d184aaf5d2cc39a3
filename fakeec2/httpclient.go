package fakeec2

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// NewHTTPClient returns an http.Client for aws-sdk-go-v2 clients of the emulator
// (ec2.Options.HTTPClient). It sends each request body from memory.
//
// Why: smithy-go wraps request bodies in a reader whose WriteTo returns io.EOF once the
// SDK has closed it, and the SDK closes it as soon as the response headers arrive. Go's
// transport writes a streamed body after flushing the headers, then reads the body once
// more; when the server answers within microseconds (a local emulator does), that last
// read fails, the transport drops the connection under the response being read, and the
// SDK reports "use of closed network connection" and retries. With an in-memory body the
// transport writes the whole request at once and the race cannot happen. (The emulator
// honours ClientToken, so the stock client's retries are safe too, just noisier.)
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: bufferedBodyTransport{base: http.DefaultTransport}}
}

type bufferedBodyTransport struct{ base http.RoundTripper }

func (t bufferedBodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return t.base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(b))
	r2.ContentLength = int64(len(b))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return t.base.RoundTrip(r2)
}
