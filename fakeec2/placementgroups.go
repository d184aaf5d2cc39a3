package fakeec2

import "github.com/karplab/karplab/fakeec2/ec2/wire"

// --- DescribePlacementGroups ---

// The lab has no placement groups (nothing creates them), so every answer is an empty
// list or, for a group asked for by name or ID, the not-found error AWS gives.

type describePlacementGroupsResponse struct {
	wire.Header
	PlacementGroups []struct{} `xml:"placementGroupSet>item"`
}

// placementGroupFilters are the filter names AWS documents for DescribePlacementGroups
// (tag-key and tag-value come with the tags).
var placementGroupFilters = wire.NoneTable[struct{}]("group-name", "group-arn", "spread-level", "state", "strategy")

func (s *Server) describePlacementGroups(c *call) (wire.Response, *wire.Error) {
	err := describeNone(c, wire.Describe[struct{}]{Attrs: placementGroupFilters, Tags: noTags, NoPaging: true,
		IDParam: "GroupId", NameParam: "GroupName",
		CheckIDs: func(ids []string) *wire.Error {
			for _, id := range ids {
				if !validID(id, "pg") {
					return wire.BadRequest(wire.CodeInvalidPlacementGroupIDMalformed, "Invalid id: \"%s\" (expecting \"pg-...\")", id)
				}
			}
			return nil
		},
		ByName: func(name string) (struct{}, *wire.Error) {
			return struct{}{}, wire.BadRequest(wire.CodeInvalidPlacementGroupUnknown, "The Placement Group '%s' is unknown.", name)
		}}, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidPlacementGroupIDNotFound, "The Placement Group ID '%s' is unknown.", id)
	})
	if err != nil {
		return nil, err
	}
	return &describePlacementGroupsResponse{}, nil
}
