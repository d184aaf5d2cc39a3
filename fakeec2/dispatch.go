package fakeec2

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
	"github.com/karplab/karplab/fakeec2/trail"
)

// call is one EC2 request on its way through a handler.
type call struct {
	action    string
	requestID string
	caller    string
	q         *wire.Query
	now       time.Time
	dryRun    bool
	event     *trail.AuditEvent
	wait      <-chan error // the handler's writes reach disk when this yields
	idemKey   string       // set for a mutating call with a ClientToken
	replay    []byte       // the stored answer when this call repeats a ClientToken
}

type handlerFunc func(s *Server, c *call) (wire.Response, *wire.Error)

type actionSpec struct {
	fn handlerFunc
	// mutating handlers check DryRun themselves, after validating, and the response waits
	// for their writes to be durable. Read-only ones answer DryRun in the dispatcher.
	mutating bool
}

// actions is the dispatch table, keyed by the Action parameter.
var actions map[string]actionSpec

func init() {
	actions = map[string]actionSpec{
		// instances
		"RunInstances":                  {fn: (*Server).runInstances, mutating: true},
		"TerminateInstances":            {fn: (*Server).terminateInstances, mutating: true},
		"DescribeInstances":             {fn: (*Server).describeInstances},
		"DescribeInstanceStatus":        {fn: (*Server).describeInstanceStatus},
		"DescribeInstanceAttribute":     {fn: (*Server).describeInstanceAttribute},
		"ModifyInstanceAttribute":       {fn: (*Server).modifyInstanceAttribute, mutating: true},
		"CreateFleet":                   {fn: (*Server).createFleet, mutating: true},
		"RebootInstances":               {fn: (*Server).rebootInstances, mutating: true},
		"StopInstances":                 {fn: (*Server).stopInstances, mutating: true},
		"StartInstances":                {fn: (*Server).startInstances, mutating: true},
		"ModifyInstanceMetadataOptions": {fn: (*Server).modifyInstanceMetadataOptions, mutating: true},
		"GetConsoleOutput":              {fn: (*Server).getConsoleOutput},
		"DescribeFleets":                {fn: (*Server).describeFleets},
		"DescribeFleetInstances":        {fn: (*Server).describeFleetInstances},
		"DeleteFleets":                  {fn: (*Server).deleteFleets, mutating: true},
		// launch templates
		"CreateLaunchTemplate":           {fn: (*Server).createLaunchTemplate, mutating: true},
		"CreateLaunchTemplateVersion":    {fn: (*Server).createLaunchTemplateVersion, mutating: true},
		"DescribeLaunchTemplates":        {fn: (*Server).describeLaunchTemplates},
		"DescribeLaunchTemplateVersions": {fn: (*Server).describeLaunchTemplateVersions},
		"DeleteLaunchTemplate":           {fn: (*Server).deleteLaunchTemplate, mutating: true},
		// storage and network interfaces
		"DescribeVolumes":                 {fn: (*Server).describeVolumes},
		"DescribeNetworkInterfaces":       {fn: (*Server).describeNetworkInterfaces},
		"CreateVolume":                    {fn: (*Server).createVolume, mutating: true},
		"AttachVolume":                    {fn: (*Server).attachVolume, mutating: true},
		"DetachVolume":                    {fn: (*Server).detachVolume, mutating: true},
		"DeleteVolume":                    {fn: (*Server).deleteVolume, mutating: true},
		"ModifyVolume":                    {fn: (*Server).modifyVolume, mutating: true},
		"DescribeVolumesModifications":    {fn: (*Server).describeVolumesModifications},
		"CreateSnapshot":                  {fn: (*Server).createSnapshot, mutating: true},
		"DescribeSnapshots":               {fn: (*Server).describeSnapshots},
		"DeleteSnapshot":                  {fn: (*Server).deleteSnapshot, mutating: true},
		"CreateNetworkInterface":          {fn: (*Server).createNetworkInterface, mutating: true},
		"AttachNetworkInterface":          {fn: (*Server).attachNetworkInterface, mutating: true},
		"DetachNetworkInterface":          {fn: (*Server).detachNetworkInterface, mutating: true},
		"DeleteNetworkInterface":          {fn: (*Server).deleteNetworkInterface, mutating: true},
		"ModifyNetworkInterfaceAttribute": {fn: (*Server).modifyNetworkInterfaceAttribute, mutating: true},
		// tags
		"CreateTags":   {fn: (*Server).createTags, mutating: true},
		"DeleteTags":   {fn: (*Server).deleteTags, mutating: true},
		"DescribeTags": {fn: (*Server).describeTags},
		// network
		"DescribeVpcs":              {fn: (*Server).describeVpcs},
		"DescribeSubnets":           {fn: (*Server).describeSubnets},
		"DescribeSecurityGroups":    {fn: (*Server).describeSecurityGroups},
		"DescribeAvailabilityZones": {fn: (*Server).describeAvailabilityZones},
		"DescribeRegions":           {fn: (*Server).describeRegions},
		"DescribeAccountAttributes": {fn: (*Server).describeAccountAttributes},
		"DescribeKeyPairs":          {fn: (*Server).describeKeyPairs},
		"DescribeAddresses":         {fn: (*Server).describeAddresses},
		"DescribeRouteTables":       {fn: (*Server).describeRouteTables},
		"CreateSecurityGroup":       {fn: (*Server).createSecurityGroup, mutating: true},
		"DeleteSecurityGroup":       {fn: (*Server).deleteSecurityGroup, mutating: true},
		"DeleteSubnet":              {fn: (*Server).deleteSubnet, mutating: true},
		// images and capacity
		"DescribeImages":                {fn: (*Server).describeImages},
		"DescribeInstanceTypes":         {fn: (*Server).describeInstanceTypes},
		"DescribeInstanceTypeOfferings": {fn: (*Server).describeInstanceTypeOfferings},
		"DescribeSpotPriceHistory":      {fn: (*Server).describeSpotPriceHistory},
		"DescribeCapacityReservations":  {fn: (*Server).describeCapacityReservations},
		"DescribePlacementGroups":       {fn: (*Server).describePlacementGroups},
	}
}

// Actions lists the EC2 actions the emulator answers, sorted.
func Actions() []string {
	out := make([]string, 0, len(actions))
	for a := range actions {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

const maxBody = 8 << 20

// serveEC2 answers an EC2 Query-protocol request.
func (s *Server) serveEC2(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := s.ids.NewID("")
	c := &call{requestID: reqID, caller: account.CallerFromAuth(r.Header.Get("Authorization")), now: s.clock.Now()}
	body, apiErr := s.handle(r, c)
	var out []byte
	status := http.StatusOK
	switch {
	case apiErr == nil && c.replay != nil:
		out = c.replay
	case apiErr == nil:
		var err error
		out, err = wire.MarshalResponse(c.action, reqID, body)
		if err != nil {
			apiErr = wire.Internal("encoding the response: %v", err)
		} else if c.idemKey != "" {
			s.rememberIdempotent(c.idemKey, reqID, out)
		}
	}
	if apiErr != nil {
		status = apiErr.HTTPStatus
		out = wire.MarshalError(apiErr, reqID)
	}
	if c.event != nil {
		if apiErr != nil {
			c.event.ErrorCode, c.event.ErrorMessage = apiErr.Code, apiErr.Message
		}
		wait := s.recordAudit(c.event)
		if c.wait != nil { // a mutation: answer only once it (and its audit record) is durable
			err := <-c.wait
			if err2 := <-wait; err == nil {
				err = err2
			}
			if err != nil {
				status, apiErr = http.StatusInternalServerError, wire.Internal("persisting state: %v", err)
				out = wire.MarshalError(apiErr, reqID)
			}
		}
	}
	code := ""
	if apiErr != nil {
		code = apiErr.Code
	}
	s.log.Debug("ec2 request", "action", c.action, "requestId", reqID, "caller", c.caller,
		"status", status, "code", code, "duration", time.Since(start).Round(time.Microsecond))
	if s.log.Enabled(r.Context(), levelBodies) {
		params := map[string]string{}
		if c.q != nil {
			params = c.q.Flatten()
		}
		s.log.Log(r.Context(), levelBodies, "ec2 body", "requestId", reqID, "params", params, "response", string(out))
	}
	wire.WriteBody(w, status, out)
}

// levelBodies is the slog level of request and response bodies (-v 2).
const levelBodies = -8

func (s *Server) handle(r *http.Request, c *call) (wire.Response, *wire.Error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, wire.Errorf(http.StatusRequestEntityTooLarge, wire.CodeInvalidHTTPRequest, "The request body is too large.")
		}
		return nil, wire.BadRequest("MalformedQueryString", "The query string is malformed: %v", err)
	}
	q, err := wire.ParseQuery(r.Form)
	if err != nil {
		return nil, wire.BadRequest("MalformedQueryString", "%v", err)
	}
	c.q = q
	c.action = q.Str("Action")
	if c.action == "" {
		return nil, wire.BadRequest(wire.CodeMissingAction, "The request must contain the parameter Action")
	}
	spec, ok := actions[c.action]
	if !ok {
		return nil, wire.BadRequest(wire.CodeInvalidAction, "The action %s is not valid for this web service.", c.action)
	}
	c.event = &trail.AuditEvent{
		Service: "ec2", Time: c.now, Action: c.action, Caller: c.caller, RequestID: c.requestID,
		SourceIP: r.RemoteAddr, UserAgent: r.UserAgent(), Parameters: q.Flatten(), ReadOnly: !spec.mutating,
	}
	if v := q.Str("Version"); v != "" && v != "2016-11-15" {
		return nil, wire.InvalidValue("Version %q is not supported; this endpoint speaks 2016-11-15.", v)
	}
	dry, _, derr := q.Bool("DryRun")
	if derr != nil {
		return nil, derr
	}
	c.dryRun = dry
	c.event.DryRun = dry

	if e := s.applyRequestFaults(c); e != nil {
		return nil, e
	}
	if e := s.authorizeAction(c); e != nil {
		return nil, e
	}
	if dry && !spec.mutating {
		return nil, wire.DryRun()
	}
	if tok := q.Str("ClientToken"); tok != "" && spec.mutating && !dry {
		// EC2 answers a repeated ClientToken with the first call's result and does nothing
		// again; SDK retries rely on it.
		c.idemKey = c.action + "\x00" + c.caller + "\x00" + tok
		if prev, ok := s.idempotentAnswer(c.idemKey, c.requestID); ok {
			c.replay = prev
			c.event.Replay = true
			return nil, nil
		}
	}
	s.advanceIfDue(c.now)
	return spec.fn(s, c)
}

// env is what wire's conversions need of the server; those that read its Model run
// under s.mu.
func (s *Server) env() wire.Env {
	return wire.Env{Account: s.account, Region: s.region, Now: s.clock.Now(), Model: &s.model, Types: s.types}
}

// mutate runs fn under the store lock and queues its writes; the request answers once
// they are durable.
func (s *Server) mutate(c *call, fn func() *wire.Error) *wire.Error {
	s.mu.Lock()
	s.advanceLocked(c.now)
	seq := s.seq
	err := fn()
	if s.seq != seq {
		s.saveMeta()
	}
	c.wait = s.flushLocked()
	s.mu.Unlock()
	return err
}
