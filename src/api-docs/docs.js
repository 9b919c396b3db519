// Renders /openapi.json with Swagger UI's bundle, served by the platform itself (no other
// origin: the page's CSP allows 'self' only). No validator badge: it would call another site.
window.ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  displayOperationId: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
});
