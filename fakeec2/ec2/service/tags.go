package service

import (
	"sort"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// taggable is a resource whose tags CreateTags/DeleteTags/DescribeTags see.
type taggable struct {
	id, resourceType string
	seq              uint64
	tags             *[]ec2.Tag
	bucket           string
	record           any
}

// findTaggable resolves an ID to its resource by prefix. Callers hold s.mu.
func (s *Service) findTaggable(id string) (*taggable, *wire.Error) {
	prefix, _, ok := strings.Cut(id, "-")
	if !ok {
		return nil, wire.BadRequest(wire.CodeInvalidID, "The ID '%s' is not valid", id)
	}
	notFound := func(code, what string) (*taggable, *wire.Error) {
		return nil, wire.BadRequest(code, "The %s ID '%s' does not exist", what, id)
	}
	switch prefix {
	case "i":
		if r := s.model.Instances[id]; r != nil {
			return newTaggable(r, "instance", bucketInstances), nil
		}
		if !validID(id, "i") {
			return nil, wire.InstanceMalformed(id)
		}
		return nil, wire.InstanceNotFound(id)
	case "vol":
		if r := s.model.Volumes[id]; r != nil {
			return newTaggable(r, "volume", bucketVolumes), nil
		}
		return nil, wire.BadRequest(wire.CodeInvalidVolumeNotFound, "The volume '%s' does not exist.", id)
	case "eni":
		if r := s.model.ENIs[id]; r != nil {
			return newTaggable(r, "network-interface", bucketENIs), nil
		}
		return notFound(wire.CodeInvalidNetworkInterfaceNotFound, "networkInterface")
	case "subnet":
		if r := s.model.Subnets[id]; r != nil {
			return newTaggable(r, "subnet", bucketSubnets), nil
		}
		return notFound(wire.CodeInvalidSubnetIDNotFound, "subnet")
	case "sg":
		if r := s.model.Groups[id]; r != nil {
			return newTaggable(r, "security-group", bucketGroups), nil
		}
		return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", id)
	case "vpc":
		if r := s.model.VPCs[id]; r != nil {
			return newTaggable(r, "vpc", bucketVPCs), nil
		}
		return notFound("InvalidVpcID.NotFound", "vpc")
	case "ami":
		if r := s.model.Images[id]; r != nil {
			return newTaggable(r, "image", bucketImages), nil
		}
		return nil, wire.BadRequest(wire.CodeInvalidAMIIDNotFound, "The image id '[%s]' does not exist", id)
	case "lt":
		if r := s.model.Templates[id]; r != nil {
			return newTaggable(r, "launch-template", bucketTemplates), nil
		}
		return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateIDNotFound, "The specified launch template, with template ID %s, does not exist.", id)
	case "snap":
		if r := s.model.Snapshots[id]; r != nil {
			return newTaggable(r, "snapshot", bucketSnapshots), nil
		}
		return nil, errSnapshotNotFound(id)
	case "fleet":
		if r := s.model.Fleets[id]; r != nil {
			return newTaggable(r, "fleet", bucketFleets), nil
		}
		return notFound("InvalidFleetId.NotFound", "fleet")
	}
	return nil, wire.BadRequest(wire.CodeInvalidID, "The ID '%s' is not valid", id)
}

func (s *Service) allTaggables() []*taggable {
	out := collectTaggables(nil, s.model.Instances, "instance", bucketInstances)
	out = collectTaggables(out, s.model.Volumes, "volume", bucketVolumes)
	out = collectTaggables(out, s.model.ENIs, "network-interface", bucketENIs)
	out = collectTaggables(out, s.model.Subnets, "subnet", bucketSubnets)
	out = collectTaggables(out, s.model.Groups, "security-group", bucketGroups)
	out = collectTaggables(out, s.model.VPCs, "vpc", bucketVPCs)
	out = collectTaggables(out, s.model.Images, "image", bucketImages)
	out = collectTaggables(out, s.model.Templates, "launch-template", bucketTemplates)
	out = collectTaggables(out, s.model.Snapshots, "snapshot", bucketSnapshots)
	return collectTaggables(out, s.model.Fleets, "fleet", bucketFleets)
}

func newTaggable[R ec2.Tagged](r R, resourceType, bucket string) *taggable {
	id, seq, tags := r.TagRef()
	return &taggable{id, resourceType, seq, tags, bucket, r}
}

// collectTaggables appends the records of one kind to out.
func collectTaggables[R ec2.Tagged](out []*taggable, records map[string]R, resourceType, bucket string) []*taggable {
	for _, r := range records {
		out = append(out, newTaggable(r, resourceType, bucket))
	}
	return out
}

// maxTagsPerResource bounds the tags a user puts on a resource; AWS's own (aws:...) are
// not counted.
const maxTagsPerResource = 50

// System tags EC2 itself puts on what a launch template or an EC2 Fleet launched. Nobody
// else may write or delete a tag with the aws: prefix.
const (
	TagLaunchTemplateID      = "aws:ec2launchtemplate:id"
	TagLaunchTemplateVersion = "aws:ec2launchtemplate:version"
	TagFleetID               = "aws:ec2:fleet-id"
)

func isSystemTag(key string) bool { return strings.HasPrefix(strings.ToLower(key), "aws:") }

func errReservedTag() *wire.Error {
	return wire.InvalidValue("Tag keys starting with 'aws:' are reserved for internal use")
}

// systemTags is the aws:-prefixed part of tags.
func systemTags(tags []ec2.Tag) []ec2.Tag {
	var out []ec2.Tag
	for _, t := range tags {
		if isSystemTag(t.Key) {
			out = append(out, t)
		}
	}
	return out
}

// userTags counts the tags that are not AWS's own.
func userTags(tags []ec2.Tag) int { return len(tags) - len(systemTags(tags)) }

// launchSystemTags are the tags EC2 adds to an instance (and, for the template's, its
// volumes) launched from a template or by a fleet.
func launchSystemTags(spec *launchSpec) (instance, volume []ec2.Tag) {
	if spec.templateID != "" {
		volume = []ec2.Tag{{Key: TagLaunchTemplateID, Value: spec.templateID}, {Key: TagLaunchTemplateVersion, Value: spec.templateVersion}}
	}
	instance = volume
	if spec.fleetID != "" {
		instance = append(append([]ec2.Tag(nil), volume...), ec2.Tag{Key: TagFleetID, Value: spec.fleetID})
	}
	return instance, volume
}

func (s *Service) createTags(c *call) (wire.Response, *wire.Error) {
	ids := c.q.Strs("ResourceId")
	if len(ids) == 0 {
		return nil, wire.Missing("ResourceId")
	}
	tags, err := c.q.Tags("Tag")
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, wire.Missing("Tag")
	}
	for _, t := range tags {
		if isSystemTag(t.Key) {
			return nil, errReservedTag()
		}
		if t.Key == "" || len(t.Key) > 128 || len(t.Value) > 256 {
			return nil, wire.InvalidValue("Tag key must be 1-128 characters and value at most 256 characters")
		}
	}
	aerr := s.mutate(c, func() *wire.Error {
		var targets []*taggable
		for _, id := range ids {
			t, e := s.findTaggable(id)
			if e != nil {
				return e
			}
			if userTags(ec2.SetTags(*t.tags, tags)) > maxTagsPerResource {
				return wire.BadRequest(wire.CodeTagLimitExceeded, "The maximum number of tags for resource '%s' has been reached.", id)
			}
			targets = append(targets, t)
		}
		if c.dryRun {
			return wire.DryRun()
		}
		for _, t := range targets {
			if in, ok := t.record.(*ec2.Instance); ok {
				s.model.SetInstanceTags(in, ec2.SetTags(in.Tags, tags))
			} else {
				*t.tags = ec2.SetTags(*t.tags, tags)
			}
			s.save(t.bucket, t.id, t.record)
			s.syncLedgerTags(t.id, *t.tags)
		}
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

func (s *Service) deleteTags(c *call) (wire.Response, *wire.Error) {
	ids := c.q.Strs("ResourceId")
	if len(ids) == 0 {
		return nil, wire.Missing("ResourceId")
	}
	var dels []ec2.TagDeletion
	for _, t := range c.q.List("Tag") {
		if !t.Has("Key") {
			return nil, wire.Missing("Tag.Key")
		}
		if isSystemTag(t.Str("Key")) {
			return nil, errReservedTag()
		}
		dels = append(dels, ec2.TagDeletion{Key: t.Str("Key"), Value: t.Str("Value"), HasValue: t.Has("Value")})
	}
	aerr := s.mutate(c, func() *wire.Error {
		var targets []*taggable
		for _, id := range ids {
			t, e := s.findTaggable(id)
			if e != nil {
				return e
			}
			targets = append(targets, t)
		}
		if c.dryRun {
			return wire.DryRun()
		}
		for _, t := range targets {
			next := systemTags(*t.tags) // no Tag parameter: delete every tag but AWS's own
			if len(dels) > 0 {
				next = ec2.DeleteTags(*t.tags, dels)
			}
			if in, ok := t.record.(*ec2.Instance); ok {
				s.model.SetInstanceTags(in, next)
			} else {
				*t.tags = next
			}
			s.save(t.bucket, t.id, t.record)
			s.syncLedgerTags(t.id, *t.tags)
		}
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

type tagRow struct {
	seq          uint64
	res          *taggable
	id, rt, k, v string
}

var tagRowAttrs = wire.AttrTable[tagRow]{
	"resource-id":   func(r tagRow) []string { return wire.One(r.id) },
	"resource-type": func(r tagRow) []string { return wire.One(r.rt) },
	"key":           func(r tagRow) []string { return []string{r.k} },
	"value":         func(r tagRow) []string { return []string{r.v} },
}

// compileTagFilters splits DescribeTags' filters: tag:KEY selects the rows of resources
// carrying that tag (all their tags are shown), the others match rows.
func compileTagFilters(fs []wire.Filter) (func(tagRow) bool, *wire.Error) {
	var tagFilters, rowFilters []wire.Filter
	for _, f := range fs {
		if strings.HasPrefix(f.Name, "tag:") {
			tagFilters = append(tagFilters, f)
		} else {
			rowFilters = append(rowFilters, f)
		}
	}
	pred, err := wire.CompileFilters(rowFilters, tagRowAttrs, nil)
	if err != nil {
		return nil, err
	}
	resPred, err := wire.CompileFilters(tagFilters, wire.AttrTable[*taggable]{}, func(t *taggable) []ec2.Tag { return *t.tags })
	if err != nil {
		return nil, err
	}
	return func(r tagRow) bool { return resPred(r.res) && pred(r) }, nil
}

func (s *Service) describeTags(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[tagRow]{Compile: compileTagFilters, Min: 5, Max: 1000,
		Seq: func(r tagRow) uint64 { return r.seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	res := s.allTaggables()
	sort.Slice(res, func(i, j int) bool {
		if res[i].seq != res[j].seq {
			return res[i].seq < res[j].seq
		}
		return res[i].id < res[j].id
	})
	var rows []tagRow // numbered after filtering: tokens count matching rows
	for _, t := range res {
		tags := append([]ec2.Tag(nil), *t.tags...)
		sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
		for _, tg := range tags {
			if r := (tagRow{seq: uint64(len(rows) + 1), res: t, id: t.id, rt: t.resourceType, k: tg.Key, v: tg.Value}); req.Match(r) {
				rows = append(rows, r)
			}
		}
	}
	page, next := req.Cut(rows)
	return &wire.DescribeTagsResponse{NextToken: next, Tags: wire.Items(page, func(r tagRow) wire.TagDescriptionItem {
		return wire.TagDescriptionItem{ResourceID: r.id, ResourceType: r.rt, Key: r.k, Value: r.v}
	})}, nil
}
