package account

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// MaxBody bounds a request body, as fakeec2's EC2 handler does.
const MaxBody = 8 << 20

// NewCall reads r into a Call for service; a body over MaxBody is an error.
func NewCall(h Host, service string, r *http.Request) (*Call, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err != nil {
		return nil, err
	}
	return &Call{Service: service, RequestID: h.NewID(""), Caller: CallerFromAuth(r.Header.Get("Authorization")),
		Now: h.Now(), HTTP: r, Body: body}, nil
}

// Write sends a Response.
func Write(w http.ResponseWriter, resp *Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// Handler serves one service alone over HTTP: what a service package's tests put on a
// real listener. fakeec2's router does the same for every service, plus the audit trail.
func Handler(h Host, svc Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := NewCall(h, svc.Name(), r)
		if err != nil {
			var mbe *http.MaxBytesError
			status := http.StatusBadRequest
			if errors.As(err, &mbe) {
				status = http.StatusRequestEntityTooLarge
			}
			http.Error(w, err.Error(), status)
			return
		}
		Write(w, svc.Serve(c))
	})
}

// CallerFromAuth returns the access key ID of a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-2/ec2/aws4_request, ..."), or
// "anonymous". Signatures are not verified: the lab has no secrets to check against.
func CallerFromAuth(h string) string {
	key, _, _ := strings.Cut(credential(h), "/")
	if key == "" {
		return "anonymous"
	}
	return key
}

// ServiceFromAuth returns the signing name of a SigV4 credential scope
// (".../eu-west-2/ssm/aws4_request" -> "ssm"), or "".
func ServiceFromAuth(h string) string {
	parts := strings.Split(credential(h), "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return ""
	}
	return parts[3]
}

// credential is the Credential= value of a SigV4 Authorization header, or "".
func credential(h string) string {
	i := strings.Index(h, "Credential=")
	if i < 0 {
		return ""
	}
	c := h[i+len("Credential="):]
	if j := strings.IndexAny(c, ", "); j >= 0 {
		c = c[:j]
	}
	return c
}
