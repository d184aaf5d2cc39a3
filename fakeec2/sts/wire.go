package sts

import (
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/karplab/karplab/fakeec2/account"
)

// Namespace and Version of STS's awsquery protocol.
const (
	Namespace = "https://sts.amazonaws.com/doc/2011-06-15/"
	Version   = "2011-06-15"
)

// maxEncodedMessage is DecodeAuthorizationMessage's EncodedMessage length limit.
const maxEncodedMessage = 10240

// Options configures New.
type Options struct {
	// Decode returns the denial reason behind an encoded authorization message, or false
	// for a message the account never issued.
	Decode func(encoded string) (decoded string, ok bool)
	// DecodeDenial, when set, is asked instead of Decode and tells the whole denial, so
	// the decoded message names its principal, action and resource.
	DecodeDenial func(encoded string) (Denial, bool)
}

// Service is the account's STS. It implements account.Service.
type Service struct {
	host  account.Host
	opts  Options
	query account.QueryService
}

var _ account.Service = (*Service)(nil)

// New returns STS for host. It has no durable state.
func New(host account.Host, opts Options) (*Service, error) {
	s := &Service{host: host, opts: opts}
	getCallerIdentity := func(c *account.Call, _ url.Values) (any, *account.Error) { return s.getCallerIdentity(c), nil }
	s.query = account.QueryService{Namespace: Namespace, Version: Version, Actions: map[string]account.QueryActionSpec{
		"GetCallerIdentity":          {Handler: getCallerIdentity, ReadOnly: true},
		"DecodeAuthorizationMessage": {Handler: s.decodeAuthorizationMessage, ReadOnly: true},
	}}
	return s, nil
}

// Name is STS's SigV4 signing name.
func (s *Service) Name() string { return "sts" }

// Serve answers one awsquery call.
func (s *Service) Serve(c *account.Call) *account.Response {
	resp := account.ServeQuery(c, s.query)
	c.ReadOnly = true // neither action changes anything, not even a rejected call
	return resp
}

type callerIdentityResult struct {
	UserID  string `xml:"UserId"`
	Account string `xml:"Account"`
	Arn     string `xml:"Arn"`
}

// getCallerIdentity is never denied: AWS answers it even when a policy denies
// sts:GetCallerIdentity explicitly, so the policy is not asked.
func (s *Service) getCallerIdentity(c *account.Call) callerIdentityResult {
	return callerIdentityResult{UserID: UserID(s.host, c.Caller), Account: s.host.AccountID(),
		Arn: account.CallerARN(s.host, c.Caller)}
}

type decodeResult struct {
	DecodedMessage string `xml:"DecodedMessage"`
}

func (s *Service) decodeAuthorizationMessage(c *account.Call, f url.Values) (any, *account.Error) {
	msg := f.Get("EncodedMessage")
	if msg == "" {
		return nil, account.BadRequest("ValidationError",
			"1 validation error detected: Value null at 'encodedMessage' failed to satisfy constraint: Member must not be null")
	}
	if utf8.RuneCountInString(msg) > maxEncodedMessage {
		return nil, account.BadRequest("ValidationError",
			"1 validation error detected: Value at 'encodedMessage' failed to satisfy constraint: Member must have length less than or equal to %d", maxEncodedMessage)
	}
	const action = "sts:DecodeAuthorizationMessage"
	if reason := s.host.Authorize(c.Caller, action, "*"); reason != "" {
		c.DenialReason = reason
		return nil, account.Errorf(http.StatusForbidden, "AccessDenied", "%s", account.NotAuthorizedMessage(s.host, c.Caller, action, "*"))
	}
	d, ok := s.decode(msg)
	if !ok {
		return nil, account.BadRequest("InvalidAuthorizationMessageException",
			"The encoded authorization message is invalid or was not issued by this account.")
	}
	return decodeResult{DecodedMessage: DecodedMessage(s.host, d)}, nil
}

func (s *Service) decode(msg string) (Denial, bool) {
	if s.opts.DecodeDenial != nil {
		return s.opts.DecodeDenial(msg)
	}
	if s.opts.Decode != nil {
		reason, ok := s.opts.Decode(msg)
		return denialFromReason(reason), ok
	}
	return Denial{}, false
}
