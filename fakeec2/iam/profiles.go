package iam

import (
	"net/http"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

func checkProfileName(name string) *account.Error {
	return checkName("instanceProfileName", name, 128)
}

// createProfile adds an empty instance profile; id is the AIPA-prefixed unique ID.
func (m *model) createProfile(name, path string, tags []Tag, id string, now time.Time) (*profile, []account.Op, *account.Error) {
	if e := checkProfileName(name); e != nil {
		return nil, nil, e
	}
	path, e := normPath(path)
	if e != nil {
		return nil, nil, e
	}
	if e := checkTags(nil, tags); e != nil {
		return nil, nil, e
	}
	if _, ok := m.profiles[key(name)]; ok {
		return nil, nil, account.Errorf(http.StatusConflict, "EntityAlreadyExists", "Instance Profile %s already exists.", name)
	}
	p := &profile{Name: name, ID: id, ARN: m.profileARN(path, name), Path: path,
		CreateDate: now.UTC().Truncate(time.Second), Tags: mergeTags(nil, tags)}
	m.profiles[key(name)] = p
	return p, []account.Op{profileOp(p)}, nil
}

func (m *model) getProfile(name string) (*profile, *account.Error) {
	if e := checkProfileName(name); e != nil {
		return nil, e
	}
	p, ok := m.profiles[key(name)]
	if !ok {
		return nil, noSuchProfile(name)
	}
	return p, nil
}

// deleteProfile removes a profile that holds no role.
func (m *model) deleteProfile(name string) (*profile, []account.Op, *account.Error) {
	p, e := m.getProfile(name)
	if e != nil {
		return nil, nil, e
	}
	if p.RoleName != "" {
		return nil, nil, account.Errorf(http.StatusConflict, "DeleteConflict",
			"Cannot delete entity, must remove roles from instance profile first.")
	}
	delete(m.profiles, key(p.Name))
	return p, []account.Op{{Bucket: bucketProfiles, Key: key(p.Name)}}, nil
}

// addRoleChecks finds the profile and role AddRoleToInstanceProfile names, before the
// PassRole check; the one-role limit is checked by addRole after it.
func (m *model) addRoleChecks(profileName, role string) (*profile, *Role, *account.Error) {
	if e := checkProfileName(profileName); e != nil {
		return nil, nil, e
	}
	if e := checkName("roleName", role, 64); e != nil {
		return nil, nil, e
	}
	p, ok := m.profiles[key(profileName)]
	if !ok {
		return nil, nil, noSuchProfile(profileName)
	}
	r, ok := m.roles[key(role)]
	if !ok {
		return nil, nil, noSuchRole(role)
	}
	return p, r, nil
}

// addRole puts r in p; a profile holds at most one role, and AWS answers LimitExceeded
// even when it already holds this very one.
func (m *model) addRole(p *profile, r *Role) ([]account.Op, *account.Error) {
	if p.RoleName != "" {
		return nil, account.Errorf(http.StatusConflict, "LimitExceeded",
			"Cannot exceed quota for InstanceSessionsPerInstanceProfile: %d", maxRolesPerProfile)
	}
	p.RoleName = r.Name
	return []account.Op{profileOp(p)}, nil
}

func (m *model) removeRole(profileName, role string) (*profile, []account.Op, *account.Error) {
	if e := checkName("roleName", role, 64); e != nil {
		return nil, nil, e
	}
	p, e := m.getProfile(profileName)
	if e != nil {
		return nil, nil, e
	}
	if _, ok := m.roles[key(role)]; !ok {
		return nil, nil, noSuchRole(role)
	}
	if key(p.RoleName) != key(role) {
		return nil, nil, account.Errorf(http.StatusNotFound, "NoSuchEntity",
			"Role %s is not attached to instance profile %s.", role, p.Name)
	}
	p.RoleName = ""
	return p, []account.Op{profileOp(p)}, nil
}

func (m *model) tagProfile(name string, tags []Tag) ([]account.Op, *account.Error) {
	p, e := m.getProfile(name)
	if e != nil {
		return nil, e
	}
	if len(tags) == 0 {
		return nil, validationError("1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
	}
	if e := checkTags(p.Tags, tags); e != nil {
		return nil, e
	}
	p.Tags = mergeTags(p.Tags, tags)
	return []account.Op{profileOp(p)}, nil
}

// untagProfile drops the named keys; keys the profile lacks are ignored, as in AWS.
func (m *model) untagProfile(name string, keys []string) ([]account.Op, *account.Error) {
	p, e := m.getProfile(name)
	if e != nil {
		return nil, e
	}
	if len(keys) == 0 {
		return nil, validationError("1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null")
	}
	if len(keys) > maxTagsPerResource {
		return nil, validationError("1 validation error detected: Value at 'tagKeys' failed to satisfy constraint: Member must have length less than or equal to %d", maxTagsPerResource)
	}
	var kept []Tag
	for _, t := range p.Tags {
		drop := false
		for _, k := range keys {
			drop = drop || strings.EqualFold(t.Key, k)
		}
		if !drop {
			kept = append(kept, t)
		}
	}
	p.Tags = kept
	return []account.Op{profileOp(p)}, nil
}

// listProfiles returns the profiles whose path starts with prefix, by name.
func (m *model) listProfiles(prefix string) ([]*profile, *account.Error) {
	return underPath(m.profiles, prefix, func(p *profile) string { return p.Path })
}

func (m *model) profilesForRole(role string) ([]*profile, *account.Error) {
	r, e := m.getRole(role)
	if e != nil {
		return nil, e
	}
	var out []*profile
	for _, p := range sortedByName(m.profiles) {
		if key(p.RoleName) == key(r.Name) {
			out = append(out, p)
		}
	}
	return out, nil
}

// profileARNFor is the ARN a policy sees for a profile name (path-less when unknown).
func (m *model) profileARNFor(name string) string {
	if p, ok := m.profiles[key(name)]; ok {
		return p.ARN
	}
	return m.profileARN("/", name)
}
