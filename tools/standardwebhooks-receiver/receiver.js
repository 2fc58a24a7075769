// A provider's webhook receiver built on the official Standard Webhooks library, so OpsDeck's
// signatures are checked by code other than its own.
//
//   node receiver.js [--port N]      prints "listening on http://127.0.0.1:PORT" once ready
//   PUT  /secrets  ["whsec_…", …]    every listed secret must verify each later request on its own
//                                    (during a rotation OpsDeck signs with both secrets)
//   GET  /stats                      {"ok", "bad", "ids": [webhook-id…], "errors": [message…]}
//   POST anything else               a webhook: 204 when it verifies, 400 with the reason otherwise,
//                                    503 before any secret is configured
'use strict';

const http = require('http');
const { Webhook } = require('standardwebhooks');

const portArg = process.argv.indexOf('--port');
const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 0;

let secrets = [];
const stats = { ok: 0, bad: 0, ids: [], errors: [] };

function verifyAll(body, headers) {
    for (const secret of secrets) {
        try {
            new Webhook(secret).verify(body, headers);
        } catch (e) {
            return `${secret.slice(0, 12)}…: ${e.message}`;
        }
    }
    return null;
}

const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.method === 'GET' && req.url === '/stats') {
            res.setHeader('Content-Type', 'application/json');
            res.end(JSON.stringify(stats));
            return;
        }
        if (req.method === 'PUT' && req.url === '/secrets') {
            try {
                const list = JSON.parse(body);
                if (!Array.isArray(list) || !list.every((s) => typeof s === 'string'))
                    throw new Error('expected an array of strings');
                secrets = list;
                res.statusCode = 204;
            } catch (e) {
                res.statusCode = 400;
                res.write(e.message);
            }
            res.end();
            return;
        }
        if (secrets.length === 0) {
            // Not ready yet (the secret comes from the registration): the sender retries later.
            res.statusCode = 503;
            res.setHeader('Retry-After', '1');
            res.end('no secret configured yet');
            return;
        }
        const error = verifyAll(body, req.headers);
        if (error === null) {
            stats.ok++;
            stats.ids.push(req.headers['webhook-id']);
            res.statusCode = 204;
        } else {
            stats.bad++;
            stats.errors.push(error);
            res.statusCode = 400;
            res.write(error);
        }
        res.end();
    });
});

server.listen(port, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
