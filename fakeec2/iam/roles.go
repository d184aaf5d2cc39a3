package iam

import (
	"net/http"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// createRoleInput is what CreateRole asks for, decoded.
type createRoleInput struct {
	Name, Path, AssumeRolePolicyDocument, Description string
	MaxSessionDuration                                int32 // 0: the default hour
	Tags                                              []Tag
}

// checkCreateRole validates a CreateRole request and returns its normalised path.
func checkCreateRole(in createRoleInput) (string, *account.Error) {
	if e := checkName("roleName", in.Name, 64); e != nil {
		return "", e
	}
	path, e := normPath(in.Path)
	if e != nil {
		return "", e
	}
	if e := checkPolicyDocument(in.AssumeRolePolicyDocument); e != nil {
		return "", e
	}
	if len(in.Description) > 1000 {
		return "", validationError("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1000")
	}
	if d := in.MaxSessionDuration; d != 0 && (d < 3600 || d > 43200) {
		return "", validationError("1 validation error detected: Value '%d' at 'maxSessionDuration' failed to satisfy constraint: Member must have value between 3600 and 43200", d)
	}
	if e := checkTags(nil, in.Tags); e != nil {
		return "", e
	}
	return path, nil
}

// createRole adds a role; id is the AROA-prefixed unique ID the host minted.
func (m *model) createRole(in createRoleInput, id string, now time.Time) (*Role, []account.Op, *account.Error) {
	path, e := checkCreateRole(in)
	if e != nil {
		return nil, nil, e
	}
	if _, ok := m.roles[key(in.Name)]; ok {
		return nil, nil, account.Errorf(http.StatusConflict, "EntityAlreadyExists", "Role with name %s already exists.", in.Name)
	}
	d := in.MaxSessionDuration
	if d == 0 {
		d = defaultSessionSeconds
	}
	r := &Role{Name: in.Name, ID: id, ARN: m.roleARN(path, in.Name), Path: path,
		CreateDate: now.UTC().Truncate(time.Second), AssumeRolePolicyDocument: in.AssumeRolePolicyDocument,
		Description: in.Description, MaxSessionDuration: d, Tags: mergeTags(nil, in.Tags)}
	m.roles[key(r.Name)] = r
	return r, []account.Op{roleOp(r)}, nil
}

func (m *model) getRole(name string) (*Role, *account.Error) {
	if e := checkName("roleName", name, 64); e != nil {
		return nil, e
	}
	r, ok := m.roles[key(name)]
	if !ok {
		return nil, noSuchRole(name)
	}
	return r, nil
}

// listRoles returns the roles whose path starts with prefix ("" or "/": all), by name.
func (m *model) listRoles(prefix string) ([]*Role, *account.Error) {
	return underPath(m.roles, prefix, func(r *Role) string { return r.Path })
}

// deleteRole removes a role that no instance profile holds.
func (m *model) deleteRole(name string) (*Role, []account.Op, *account.Error) {
	r, e := m.getRole(name)
	if e != nil {
		return nil, nil, e
	}
	for _, p := range m.profiles {
		if key(p.RoleName) == key(r.Name) {
			return nil, nil, account.Errorf(http.StatusConflict, "DeleteConflict",
				"Cannot delete entity, must remove roles from instance profile first.")
		}
	}
	delete(m.roles, key(r.Name))
	return r, []account.Op{{Bucket: bucketRoles, Key: key(r.Name)}}, nil
}

// roleARNFor is the ARN a policy sees for a role name: its real ARN when it exists, the
// path-less form otherwise (as AWS's denial messages show for unknown roles).
func (m *model) roleARNFor(name string) string {
	if r, ok := m.roles[key(name)]; ok {
		return r.ARN
	}
	return m.roleARN("/", name)
}
