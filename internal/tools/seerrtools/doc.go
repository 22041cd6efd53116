// Package seerrtools is the Seerr skill of the media agent: the tools with
// which the model finds movies and TV shows, looks at their availability
// and requests them through Overseerr/Jellyseerr ("Seerr"), with the
// client of package seerr.
//
// Each tool is a small file: its argument struct, from which toolkit
// infers the JSON schema the model is shown and checks its arguments
// against, and one function. Unlike the GNS3 tools, a Seerr tool answers
// a JSON object of its own (a page of titles, a title's details, the
// result of a request, a list of requests) and fails as a whole with an
// error named after the tool ("request_media: seerr movie 603: HTTP 500,
// ..."). The API key never appears in an answer or an error.
package seerrtools
