package fakeec2

// --- DescribePlacementGroups ---

// The lab has no placement groups (nothing creates them), so every answer is an empty
// list or, for a group asked for by name or ID, the not-found error AWS gives.

type describePlacementGroupsResponse struct {
	WireHeader
	PlacementGroups []struct{} `xml:"placementGroupSet>item"`
}

// placementGroupFilters are the filter names AWS documents for DescribePlacementGroups
// (tag-key and tag-value come with the tags).
var placementGroupFilters = noneTable[struct{}]("group-name", "group-arn", "spread-level", "state", "strategy")

func (s *Server) describePlacementGroups(c *call) (wireResponse, *APIError) {
	err := describeNone(c, describeSpec[struct{}]{attrs: placementGroupFilters, tags: noTags, noPaging: true,
		idParam: "GroupId", nameParam: "GroupName",
		checkIDs: func(ids []string) *APIError {
			for _, id := range ids {
				if !validID(id, "pg") {
					return badRequest(CodeInvalidPlacementGroupIDMalformed, "Invalid id: \"%s\" (expecting \"pg-...\")", id)
				}
			}
			return nil
		},
		byName: func(name string) (struct{}, *APIError) {
			return struct{}{}, badRequest(CodeInvalidPlacementGroupUnknown, "The Placement Group '%s' is unknown.", name)
		}}, func(id string) *APIError {
		return badRequest(CodeInvalidPlacementGroupIDNotFound, "The Placement Group ID '%s' is unknown.", id)
	})
	if err != nil {
		return nil, err
	}
	return &describePlacementGroupsResponse{}, nil
}
