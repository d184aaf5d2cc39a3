package iam

import (
	"net/url"
	"strconv"

	"github.com/karplab/karplab/fakeec2/account"
)

// Each action authorizes against the ARN AWS evaluates, then calls the model and shapes
// the XML result.

type roleResult struct {
	Role xmlRole `xml:"Role"`
}

type profileResult struct {
	InstanceProfile xmlProfile `xml:"InstanceProfile"`
}

type rolesResult struct {
	Roles       members[xmlRole] `xml:"Roles"`
	IsTruncated bool             `xml:"IsTruncated"`
	Marker      string           `xml:"Marker,omitempty"`
}

type profilesResult struct {
	InstanceProfiles members[xmlProfile] `xml:"InstanceProfiles"`
	IsTruncated      bool                `xml:"IsTruncated"`
	Marker           string              `xml:"Marker,omitempty"`
}

type tagsResult struct {
	Tags        members[xmlTag] `xml:"Tags"`
	IsTruncated bool            `xml:"IsTruncated"`
	Marker      string          `xml:"Marker,omitempty"`
}

func (s *Service) getRole(c *account.Call, f url.Values) (any, *account.Error) {
	name := f.Get("RoleName")
	if e := checkName("roleName", name, 64); e != nil {
		return nil, e
	}
	if e := s.authorizeRole(c, "iam:GetRole", name); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		r, e := m.getRole(name)
		if e != nil {
			return nil, e
		}
		return roleResult{Role: roleXML(r, true)}, nil
	})
}

func (s *Service) createRole(c *account.Call, f url.Values) (any, *account.Error) {
	in := createRoleInput{Name: f.Get("RoleName"), Path: f.Get("Path"), Description: f.Get("Description"),
		AssumeRolePolicyDocument: f.Get("AssumeRolePolicyDocument"), Tags: formTags(f, "Tags")}
	if v, ok := f["MaxSessionDuration"]; ok {
		n, err := strconv.ParseInt(first(v), 10, 32)
		if err != nil {
			return nil, validationError("1 validation error detected: Value '%s' at 'maxSessionDuration' failed to satisfy constraint: Member must be a number", first(v))
		}
		in.MaxSessionDuration = int32(n)
	}
	path, e := checkCreateRole(in)
	if e != nil {
		return nil, e
	}
	arn := s.resolve(func(m *model) string { return m.roleARN(path, in.Name) })
	if e := s.authorize(c, "iam:CreateRole", arn); e != nil {
		return nil, e
	}
	id := s.host.NewID("AROA")
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		r, ops, e := m.createRole(in, id, c.Now)
		if e != nil {
			return nil, nil, e
		}
		c.Created = append(c.Created, r.ARN)
		return roleResult{Role: roleXML(r, true)}, ops, nil
	})
}

func (s *Service) deleteRole(c *account.Call, f url.Values) (any, *account.Error) {
	name := f.Get("RoleName")
	if e := checkName("roleName", name, 64); e != nil {
		return nil, e
	}
	if e := s.authorizeRole(c, "iam:DeleteRole", name); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		r, ops, e := m.deleteRole(name)
		if e != nil {
			return nil, nil, e
		}
		c.Deleted = append(c.Deleted, r.ARN)
		return nil, ops, nil
	})
}

func (s *Service) listRoles(c *account.Call, f url.Values) (any, *account.Error) {
	pg, e := formPaging(f)
	if e != nil {
		return nil, e
	}
	if e := s.authorize(c, "iam:ListRoles", "arn:aws:iam::"+s.host.AccountID()+":role/"); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		all, e := m.listRoles(f.Get("PathPrefix"))
		if e != nil {
			return nil, e
		}
		page, trunc, marker, e := pageOf(all, func(r *Role) string { return key(r.Name) }, pg)
		if e != nil {
			return nil, e
		}
		out := rolesResult{Roles: members[xmlRole]{Items: []xmlRole{}}, IsTruncated: trunc, Marker: marker}
		for _, r := range page {
			out.Roles.Items = append(out.Roles.Items, roleXML(r, false))
		}
		return out, nil
	})
}

func (s *Service) getInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name := f.Get("InstanceProfileName")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:GetInstanceProfile", name); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		p, e := m.getProfile(name)
		if e != nil {
			return nil, e
		}
		return profileResult{InstanceProfile: m.profileXML(p, true)}, nil
	})
}

func (s *Service) createInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name, tags := f.Get("InstanceProfileName"), formTags(f, "Tags")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	path, e := normPath(f.Get("Path"))
	if e != nil {
		return nil, e
	}
	if e := s.authorize(c, "iam:CreateInstanceProfile", s.resolve(func(m *model) string { return m.profileARN(path, name) })); e != nil {
		return nil, e
	}
	if len(tags) > 0 {
		if e := s.authorize(c, "iam:TagInstanceProfile", s.resolve(func(m *model) string { return m.profileARN(path, name) })); e != nil {
			return nil, e
		}
	}
	id := s.host.NewID("AIPA")
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		p, ops, e := m.createProfile(name, path, tags, id, c.Now)
		if e != nil {
			return nil, nil, e
		}
		c.Created = append(c.Created, p.ARN)
		return profileResult{InstanceProfile: m.profileXML(p, true)}, ops, nil
	})
}

func (s *Service) deleteInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name := f.Get("InstanceProfileName")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:DeleteInstanceProfile", name); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		p, ops, e := m.deleteProfile(name)
		if e != nil {
			return nil, nil, e
		}
		c.Deleted = append(c.Deleted, p.ARN)
		return nil, ops, nil
	})
}

// addRoleToInstanceProfile also needs iam:PassRole on the role: handing a role to EC2
// is passing it.
func (s *Service) addRoleToInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name, role := f.Get("InstanceProfileName"), f.Get("RoleName")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := checkName("roleName", role, 64); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:AddRoleToInstanceProfile", name); e != nil {
		return nil, e
	}
	var roleARN string
	if _, e := s.read(func(m *model) (any, *account.Error) {
		_, r, e := m.addRoleChecks(name, role)
		if e == nil {
			roleARN = r.ARN
		}
		return nil, e
	}); e != nil {
		return nil, e
	}
	if e := s.authorize(c, "iam:PassRole", roleARN); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		p, r, e := m.addRoleChecks(name, role) // again: the state may have moved meanwhile
		if e != nil {
			return nil, nil, e
		}
		ops, e := m.addRole(p, r)
		return nil, ops, e
	})
}

func (s *Service) removeRoleFromInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name, role := f.Get("InstanceProfileName"), f.Get("RoleName")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := checkName("roleName", role, 64); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:RemoveRoleFromInstanceProfile", name); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		_, ops, e := m.removeRole(name, role)
		return nil, ops, e
	})
}

func (s *Service) tagInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name, tags := f.Get("InstanceProfileName"), formTags(f, "Tags")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:TagInstanceProfile", name); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		ops, e := m.tagProfile(name, tags)
		return nil, ops, e
	})
}

func (s *Service) untagInstanceProfile(c *account.Call, f url.Values) (any, *account.Error) {
	name, keys := f.Get("InstanceProfileName"), formList(f, "TagKeys")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:UntagInstanceProfile", name); e != nil {
		return nil, e
	}
	return s.mutate(func(m *model) (any, []account.Op, *account.Error) {
		ops, e := m.untagProfile(name, keys)
		return nil, ops, e
	})
}

func (s *Service) listInstanceProfiles(c *account.Call, f url.Values) (any, *account.Error) {
	pg, e := formPaging(f)
	if e != nil {
		return nil, e
	}
	if e := s.authorize(c, "iam:ListInstanceProfiles", "arn:aws:iam::"+s.host.AccountID()+":instance-profile/"); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		all, e := m.listProfiles(f.Get("PathPrefix"))
		if e != nil {
			return nil, e
		}
		return m.profilePage(all, pg)
	})
}

func (s *Service) listInstanceProfilesForRole(c *account.Call, f url.Values) (any, *account.Error) {
	role := f.Get("RoleName")
	if e := checkName("roleName", role, 64); e != nil {
		return nil, e
	}
	pg, e := formPaging(f)
	if e != nil {
		return nil, e
	}
	if e := s.authorizeRole(c, "iam:ListInstanceProfilesForRole", role); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		all, e := m.profilesForRole(role)
		if e != nil {
			return nil, e
		}
		return m.profilePage(all, pg)
	})
}

func (m *model) profilePage(all []*profile, pg paging) (any, *account.Error) {
	page, trunc, marker, e := pageOf(all, func(p *profile) string { return key(p.Name) }, pg)
	if e != nil {
		return nil, e
	}
	out := profilesResult{InstanceProfiles: members[xmlProfile]{Items: []xmlProfile{}}, IsTruncated: trunc, Marker: marker}
	for _, p := range page {
		out.InstanceProfiles.Items = append(out.InstanceProfiles.Items, m.profileXML(p, false))
	}
	return out, nil
}

func (s *Service) listInstanceProfileTags(c *account.Call, f url.Values) (any, *account.Error) {
	name := f.Get("InstanceProfileName")
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	pg, e := formPaging(f)
	if e != nil {
		return nil, e
	}
	if e := s.authorizeProfile(c, "iam:ListInstanceProfileTags", name); e != nil {
		return nil, e
	}
	return s.read(func(m *model) (any, *account.Error) {
		p, e := m.getProfile(name)
		if e != nil {
			return nil, e
		}
		page, trunc, marker, e := pageOf(p.Tags, func(t Tag) string { return key(t.Key) }, pg)
		if e != nil {
			return nil, e
		}
		out := tagsResult{Tags: members[xmlTag]{Items: []xmlTag{}}, IsTruncated: trunc, Marker: marker}
		for _, t := range page {
			out.Tags.Items = append(out.Tags.Items, xmlTag{Key: t.Key, Value: t.Value})
		}
		return out, nil
	})
}
