package fakeec2

import "strings"

// --- DescribePlacementGroups ---

// The lab has no placement groups (nothing creates them), so every answer is an empty
// list or, for a group asked for by name or ID, the not-found error AWS gives.

type describePlacementGroupsResponse struct {
	WireHeader
	PlacementGroups []struct{} `xml:"placementGroupSet>item"`
}

// placementGroupFilters are the filter names AWS documents for DescribePlacementGroups.
var placementGroupFilters = map[string]bool{"group-name": true, "group-arn": true, "spread-level": true,
	"state": true, "strategy": true, "tag-key": true, "tag-value": true}

func (s *Server) describePlacementGroups(c *call) (wireResponse, *APIError) {
	fs, err := c.q.filters()
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if !placementGroupFilters[f.Name] && !strings.HasPrefix(f.Name, "tag:") {
			return nil, errInvalidValue("The filter '%s' is invalid", f.Name)
		}
		if len(f.Values) == 0 {
			return nil, errInvalidValue("The filter '%s' requires at least one value", f.Name)
		}
	}
	for _, id := range c.q.strs("GroupId") {
		if !validID(id, "pg") {
			return nil, badRequest(CodeInvalidPlacementGroupIDMalformed, "Invalid id: \"%s\" (expecting \"pg-...\")", id)
		}
	}
	if ids := c.q.strs("GroupId"); len(ids) > 0 {
		return nil, badRequest(CodeInvalidPlacementGroupIDNotFound, "The Placement Group ID '%s' is unknown.", ids[0])
	}
	if names := c.q.strs("GroupName"); len(names) > 0 {
		return nil, badRequest(CodeInvalidPlacementGroupUnknown, "The Placement Group '%s' is unknown.", names[0])
	}
	return &describePlacementGroupsResponse{}, nil
}
