package service

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

var imageAttrs = wire.AttrTable[*ec2.Image]{
	"image-id":            func(i *ec2.Image) []string { return wire.One(i.ID) },
	"name":                func(i *ec2.Image) []string { return wire.One(i.Name) },
	"description":         func(i *ec2.Image) []string { return wire.One(i.Description) },
	"architecture":        func(i *ec2.Image) []string { return wire.One(i.Architecture) },
	"owner-id":            func(i *ec2.Image) []string { return wire.One(i.OwnerID) },
	"owner-alias":         func(i *ec2.Image) []string { return wire.One(i.OwnerAlias) },
	"state":               func(i *ec2.Image) []string { return wire.One("available") },
	"is-public":           func(i *ec2.Image) []string { return wire.One("true") },
	"image-type":          func(i *ec2.Image) []string { return wire.One("machine") },
	"virtualization-type": func(i *ec2.Image) []string { return wire.One("hvm") },
	"root-device-type":    func(i *ec2.Image) []string { return wire.One("ebs") },
	"root-device-name":    func(i *ec2.Image) []string { return wire.One(i.RootDeviceName) },
	"hypervisor":          func(i *ec2.Image) []string { return wire.One("xen") },
	"platform-details":    func(i *ec2.Image) []string { return wire.One("Linux/UNIX") },
	"creation-date":       func(i *ec2.Image) []string { return wire.One(wire.FormatTime(i.CreationDate)) },
	"ena-support":         func(i *ec2.Image) []string { return wire.One("true") },
	"block-device-mapping.device-name": func(i *ec2.Image) []string {
		return wire.One(i.RootDeviceName)
	},
}

func (s *Service) describeImages(c *call) (wire.Response, *wire.Error) {
	owners := c.q.Strs("Owner")
	ownerOK := func(im *ec2.Image) bool {
		if len(owners) == 0 {
			return true
		}
		for _, o := range owners {
			if o == im.OwnerID || o == im.OwnerAlias || (o == "self" && im.OwnerID == s.account) {
				return true
			}
		}
		return false
	}
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Image]{Attrs: imageAttrs, Tags: func(i *ec2.Image) []ec2.Tag { return i.Tags },
		Min: 5, Max: 1000, IDParam: "ImageId", Keep: ownerOK, Seq: func(i *ec2.Image) uint64 { return i.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Images, errImageID)
	if err != nil {
		return nil, err
	}
	return &wire.DescribeImagesResponse{Images: wire.Items(page, wire.Image), NextToken: next}, nil
}

// errImageID is the error for an image ID the account does not hold: malformed or not found.
func errImageID(id string) *wire.Error {
	if !validID(id, "ami") {
		return wire.BadRequest(wire.CodeInvalidAMIIDMalformed, "Invalid id: \"%s\" (expecting \"ami-...\")", id)
	}
	return wire.BadRequest(wire.CodeInvalidAMIIDNotFound, "The image id '[%s]' does not exist", id)
}

// validID reports whether id looks like an AWS ID of the prefix (8 or 17 hex digits).
func validID(id, prefix string) bool {
	if len(id) != len(prefix)+9 && len(id) != len(prefix)+18 {
		return false
	}
	if id[:len(prefix)+1] != prefix+"-" {
		return false
	}
	for _, r := range id[len(prefix)+1:] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}
