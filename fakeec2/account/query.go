package account

import "net/url"

// QueryHandler answers one action of an awsquery service from its decoded form; a nil
// result writes no Result element.
type QueryHandler func(c *Call, form url.Values) (any, *Error)

// QueryAction adapts a typed action: dec reads the form into In, run is the action and
// enc shapes its Out as the XML result.
func QueryAction[In any, Out any](dec func(url.Values) (*In, *Error), run func(*Call, *In) (*Out, *Error),
	enc func(*Out) any) QueryHandler {
	return func(c *Call, f url.Values) (any, *Error) {
		in, e := dec(f)
		if e != nil {
			return nil, e
		}
		out, e := run(c, in)
		if e != nil {
			return nil, e
		}
		return enc(out), nil
	}
}

// QueryActionSpec is one entry of an awsquery service's dispatch table.
type QueryActionSpec struct {
	Handler  QueryHandler
	ReadOnly bool
}

// QueryService is what ServeQuery needs of an awsquery service (IAM, STS, SQS's older
// protocol).
type QueryService struct {
	Namespace string // the XML namespace of answers
	Version   string // the API version calls must name
	Actions   map[string]QueryActionSpec
	// VersionOptional accepts a call without Version, as SQS does; a Version that is
	// sent must still match.
	VersionOptional bool
	// InvalidAction words the error for an unknown action or version. Default: IAM's and
	// STS's "Could not find operation X for version V" (V as sent).
	InvalidAction func(action, version string) *Error
}

// ServeQuery dispatches an awsquery call: the form in the body (or the URL's query,
// which these services also accept) names Action and Version; the answer is XML.
func ServeQuery(c *Call, svc QueryService) *Response {
	f, err := url.ParseQuery(string(c.Body))
	if err != nil {
		return QueryError(svc.Namespace, c.RequestID, BadRequest("MalformedQueryString", "The query string is malformed: %v", err))
	}
	if c.HTTP != nil {
		for k, v := range c.HTTP.URL.Query() {
			if _, ok := f[k]; !ok {
				f[k] = v
			}
		}
	}
	c.Action = f.Get("Action")
	c.Params = FlattenForm(f)
	delete(c.Params, "Action")
	delete(c.Params, "Version")
	if c.Action == "" {
		return QueryError(svc.Namespace, c.RequestID, BadRequest("MissingAction", "Missing Action"))
	}
	spec, ok := svc.Actions[c.Action]
	v := f.Get("Version")
	if !ok || (v != svc.Version && !(svc.VersionOptional && v == "")) {
		e := BadRequest("InvalidAction", "Could not find operation %s for version %s", c.Action, v)
		if svc.InvalidAction != nil {
			e = svc.InvalidAction(c.Action, v)
		}
		return QueryError(svc.Namespace, c.RequestID, e)
	}
	c.ReadOnly = spec.ReadOnly
	out, e := spec.Handler(c, f)
	if e != nil {
		return QueryError(svc.Namespace, c.RequestID, e)
	}
	return QueryResponse(svc.Namespace, c.Action, c.RequestID, out)
}
