// Package toolkittest helps the tests of the tool packages built on
// toolkit: it runs their tools as a user, keeps every answer, error and
// log line to check that the user's secrets appear in none, and checks
// the envelope of every answer.
package toolkittest
