package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// Audit entries (store.AuditLog) are items PK=P#{project}#AUDIT,
// SK={fixed-width UTC}#{id}: one partition per project, read newest first
// with a descending query; a user's entries are filtered on user_id.

// Attributes of an audit entry item.
const (
	auID        = "id"
	auTurn      = "turn_id"
	auAt        = "at"
	auTool      = "tool"
	auArguments = "arguments"
	auSummary   = "summary"
	auStatus    = "status"
	auDecision  = "decision"
	auDecidedBy = "decided_by"
	auSnapshot  = "snapshot_id"
)

// auditScanMax bounds how many items one query of a filtered audit
// listing evaluates.
const auditScanMax = 1000

func auditPK(project string) string { return "P#" + esc(project) + "#AUDIT" }

// AppendAudit implements store.AuditLog with a PutItem conditioned on the
// item's absence (an entry is never overwritten).
func (s *Store) AppendAudit(ctx context.Context, e *store.AuditEntry) error {
	if err := store.PrepareAudit(e, s.clock(), uuid.NewString); err != nil {
		return err
	}
	it := keyOf(auditPK(e.ProjectID), store.AuditSortKey(e))
	it[auID] = avS(e.ID)
	it[aProject] = avS(e.ProjectID)
	it[aUser] = avS(e.UserID)
	it[auAt] = avS(fmtTime(e.Time))
	it[auTool] = avS(e.Tool)
	for name, v := range map[string]string{aThread: e.ThreadID, auTurn: e.TurnID, auArguments: e.Arguments, auSummary: e.Summary,
		auStatus: e.Status, auDecision: e.Decision, auDecidedBy: e.DecidedBy, auSnapshot: e.SnapshotID} {
		if v != "" {
			it[name] = avS(v)
		}
	}
	if err := s.putNew(ctx, it); err != nil {
		return fmt.Errorf("append audit entry of %s: %w", e.ProjectID, err)
	}
	return nil
}

// ListAudit implements store.AuditLog with descending queries of the
// project's audit partition, filtered on user_id when userID is set (the
// filter applies after Limit, so the listing queries on until it holds
// one entry beyond the page or the partition is exhausted). The cursor is
// the sort key of the last entry returned.
func (s *Store) ListAudit(ctx context.Context, projectID, userID string, p store.Page) ([]store.AuditEntry, string, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return nil, "", fmt.Errorf("list audit: page limit %d out of range 1..1000", p.Limit)
	}
	e := newExpr()
	cond := e.n(attrPK) + " = " + e.v(avS(auditPK(projectID)))
	if p.Cursor != "" {
		after, err := store.DecodeAuditCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		cond += " AND " + e.n(attrSK) + " < " + e.v(avS(after))
	}
	var filter *string
	if userID != "" {
		filter = aws.String(e.n(aUser) + " = " + e.v(avS(userID)))
	}
	out := []store.AuditEntry{}
	var sks []string
	var start item
	scan := int32(p.Limit + 1)
	for {
		res, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String(cond),
			FilterExpression:          filter,
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
			ScanIndexForward:          aws.Bool(false),
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(scan),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
		}
		for _, it := range res.Items {
			a, err := auditFromItem(it)
			if err != nil {
				return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
			}
			out = append(out, *a)
			sks = append(sks, getS(it, attrSK))
		}
		start = res.LastEvaluatedKey
		if len(out) > p.Limit || start == nil {
			break
		}
		scan = min(2*scan, auditScanMax)
	}
	if len(out) <= p.Limit {
		return out, "", nil
	}
	return out[:p.Limit], store.EncodeAuditCursor(sks[p.Limit-1]), nil
}

// auditFromItem decodes an audit entry item.
func auditFromItem(it item) (*store.AuditEntry, error) {
	at, err := parseTime(getS(it, auAt))
	if err != nil {
		return nil, fmt.Errorf("audit entry %s: time: %w", getS(it, auID), err)
	}
	return &store.AuditEntry{
		ID: getS(it, auID), ProjectID: getS(it, aProject), UserID: getS(it, aUser), ThreadID: getS(it, aThread),
		TurnID: getS(it, auTurn), Time: at, Tool: getS(it, auTool), Arguments: getS(it, auArguments),
		Summary: getS(it, auSummary), Status: getS(it, auStatus), Decision: getS(it, auDecision),
		DecidedBy: getS(it, auDecidedBy), SnapshotID: getS(it, auSnapshot),
	}, nil
}

// deleteProjectAudit removes the project's audit partition
// (DeleteProject), page by page.
func (s *Store) deleteProjectAudit(ctx context.Context, projectID string) error {
	for {
		res, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{":pk": avS(auditPK(projectID))},
			ProjectionExpression:      aws.String("#pk, #sk"),
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(projectPageSize),
		})
		if err != nil {
			return fmt.Errorf("delete audit of %s: %w", projectID, err)
		}
		if len(res.Items) == 0 {
			return nil
		}
		for _, it := range res.Items {
			if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName: aws.String(s.table),
				Key:       keyOf(getS(it, attrPK), getS(it, attrSK)),
			}); err != nil {
				return fmt.Errorf("delete audit of %s: %w", projectID, err)
			}
		}
	}
}
