package service

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

type handlerFunc func(s *Service, c *call) (wire.Response, *wire.Error)

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
		"RunInstances":                  {fn: (*Service).runInstances, mutating: true},
		"TerminateInstances":            {fn: (*Service).terminateInstances, mutating: true},
		"DescribeInstances":             {fn: (*Service).describeInstances},
		"DescribeInstanceStatus":        {fn: (*Service).describeInstanceStatus},
		"DescribeInstanceAttribute":     {fn: (*Service).describeInstanceAttribute},
		"ModifyInstanceAttribute":       {fn: (*Service).modifyInstanceAttribute, mutating: true},
		"CreateFleet":                   {fn: (*Service).createFleet, mutating: true},
		"RebootInstances":               {fn: (*Service).rebootInstances, mutating: true},
		"StopInstances":                 {fn: (*Service).stopInstances, mutating: true},
		"StartInstances":                {fn: (*Service).startInstances, mutating: true},
		"ModifyInstanceMetadataOptions": {fn: (*Service).modifyInstanceMetadataOptions, mutating: true},
		"GetConsoleOutput":              {fn: (*Service).getConsoleOutput},
		"DescribeFleets":                {fn: (*Service).describeFleets},
		"DescribeFleetInstances":        {fn: (*Service).describeFleetInstances},
		"DeleteFleets":                  {fn: (*Service).deleteFleets, mutating: true},
		// launch templates
		"CreateLaunchTemplate":           {fn: (*Service).createLaunchTemplate, mutating: true},
		"CreateLaunchTemplateVersion":    {fn: (*Service).createLaunchTemplateVersion, mutating: true},
		"DescribeLaunchTemplates":        {fn: (*Service).describeLaunchTemplates},
		"DescribeLaunchTemplateVersions": {fn: (*Service).describeLaunchTemplateVersions},
		"DeleteLaunchTemplate":           {fn: (*Service).deleteLaunchTemplate, mutating: true},
		// storage and network interfaces
		"DescribeVolumes":                 {fn: (*Service).describeVolumes},
		"DescribeNetworkInterfaces":       {fn: (*Service).describeNetworkInterfaces},
		"CreateVolume":                    {fn: (*Service).createVolume, mutating: true},
		"AttachVolume":                    {fn: (*Service).attachVolume, mutating: true},
		"DetachVolume":                    {fn: (*Service).detachVolume, mutating: true},
		"DeleteVolume":                    {fn: (*Service).deleteVolume, mutating: true},
		"ModifyVolume":                    {fn: (*Service).modifyVolume, mutating: true},
		"DescribeVolumesModifications":    {fn: (*Service).describeVolumesModifications},
		"CreateSnapshot":                  {fn: (*Service).createSnapshot, mutating: true},
		"DescribeSnapshots":               {fn: (*Service).describeSnapshots},
		"DeleteSnapshot":                  {fn: (*Service).deleteSnapshot, mutating: true},
		"CreateNetworkInterface":          {fn: (*Service).createNetworkInterface, mutating: true},
		"AttachNetworkInterface":          {fn: (*Service).attachNetworkInterface, mutating: true},
		"DetachNetworkInterface":          {fn: (*Service).detachNetworkInterface, mutating: true},
		"DeleteNetworkInterface":          {fn: (*Service).deleteNetworkInterface, mutating: true},
		"ModifyNetworkInterfaceAttribute": {fn: (*Service).modifyNetworkInterfaceAttribute, mutating: true},
		// tags
		"CreateTags":   {fn: (*Service).createTags, mutating: true},
		"DeleteTags":   {fn: (*Service).deleteTags, mutating: true},
		"DescribeTags": {fn: (*Service).describeTags},
		// network
		"DescribeVpcs":              {fn: (*Service).describeVpcs},
		"DescribeSubnets":           {fn: (*Service).describeSubnets},
		"DescribeSecurityGroups":    {fn: (*Service).describeSecurityGroups},
		"DescribeAvailabilityZones": {fn: (*Service).describeAvailabilityZones},
		"DescribeRegions":           {fn: (*Service).describeRegions},
		"DescribeAccountAttributes": {fn: (*Service).describeAccountAttributes},
		"DescribeKeyPairs":          {fn: (*Service).describeKeyPairs},
		"DescribeAddresses":         {fn: (*Service).describeAddresses},
		"DescribeRouteTables":       {fn: (*Service).describeRouteTables},
		"CreateSecurityGroup":       {fn: (*Service).createSecurityGroup, mutating: true},
		"DeleteSecurityGroup":       {fn: (*Service).deleteSecurityGroup, mutating: true},
		"DeleteSubnet":              {fn: (*Service).deleteSubnet, mutating: true},
		// images and capacity
		"DescribeImages":                {fn: (*Service).describeImages},
		"DescribeInstanceTypes":         {fn: (*Service).describeInstanceTypes},
		"DescribeInstanceTypeOfferings": {fn: (*Service).describeInstanceTypeOfferings},
		"DescribeSpotPriceHistory":      {fn: (*Service).describeSpotPriceHistory},
		"DescribeCapacityReservations":  {fn: (*Service).describeCapacityReservations},
		"DescribePlacementGroups":       {fn: (*Service).describePlacementGroups},
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

// ServeHTTP answers an EC2 Query-protocol request.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := s.ids.NewID("")
	c := &call{requestID: reqID, caller: account.CallerFromAuth(r.Header.Get("Authorization")), now: s.acct.Now()}
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
		wait := s.acct.Record(c.event)
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
	if s.log.Enabled(r.Context(), account.LevelBodies) {
		params := map[string]string{}
		if c.q != nil {
			params = c.q.Flatten()
		}
		s.log.Log(r.Context(), account.LevelBodies, "ec2 body", "requestId", reqID, "params", params, "response", string(out))
	}
	wire.WriteBody(w, status, out)
}

func (s *Service) handle(r *http.Request, c *call) (wire.Response, *wire.Error) {
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
func (s *Service) env() wire.Env {
	return wire.Env{Account: s.account, Region: s.region, Now: s.acct.Now(), Model: &s.model, Types: s.types}
}

// mutate runs fn under the store lock and queues its writes; the request answers once
// they are durable.
func (s *Service) mutate(c *call, fn func() *wire.Error) *wire.Error {
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
