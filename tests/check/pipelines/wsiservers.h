/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiservers.h: real servers on loopback for the remote-slide tests: nginx
 * serving a folder (Range, ETag, If-Match as any web server does), and the
 * project's delaying/faulting proxy (faultproxy.py) in front of it. Each is
 * a child process that the test stops; the proxy also stops by itself when
 * the test dies (its stdin closes). */

#ifndef __WSI_SERVERS_TEST_H__
#define __WSI_SERVERS_TEST_H__

#include <glib.h>
#include <glib/gstdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct
{
  GPid pid;
  guint port;
  gchar *dir;                   /* config, logs, temp files */
} WsiNginx;

typedef struct
{
  GPid pid;
  guint port;
  gint stdin_fd;
  gchar *report;                /* what it injected, written at exit */
} WsiProxy;

/* Servers die with the test, even when it crashes. */
static void
wsi_die_with_parent (gpointer user_data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* A port free now on 127.0.0.1 (the kernel's pick). */
static guint
wsi_free_port (void)
{
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof (addr);
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  guint port = 0;

  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof (addr)) == 0
      && getsockname (fd, (struct sockaddr *) &addr, &len) == 0)
    port = ntohs (addr.sin_port);
  if (fd >= 0)
    close (fd);
  return port;
}

static gboolean
wsi_port_accepts (guint port)
{
  struct sockaddr_in addr = { 0 };
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  gboolean ok;

  addr.sin_family = AF_INET;
  addr.sin_port = htons (port);
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  ok = fd >= 0 && connect (fd, (struct sockaddr *) &addr, sizeof (addr)) == 0;
  if (fd >= 0)
    close (fd);
  return ok;
}

/* The nginx binary, or NULL. */
static gchar *
wsi_nginx_find (void)
{
  gchar *path = g_find_program_in_path ("nginx");

  if (path == NULL && g_file_test ("/usr/sbin/nginx", G_FILE_TEST_IS_EXECUTABLE))
    path = g_strdup ("/usr/sbin/nginx");
  return path;
}

/* Starts nginx serving @root on 127.0.0.1; FALSE with *why on failure. */
static gboolean
wsi_nginx_start (WsiNginx * n, const gchar * root, const gchar * workdir,
    gchar ** why)
{
  gchar *binary = wsi_nginx_find ();
  gchar *conf, *conf_path, *log_path;
  const gchar *argv[8];
  GError *err = NULL;
  guint i;

  memset (n, 0, sizeof (*n));
  if (binary == NULL) {
    *why = g_strdup ("nginx is not installed (Debian package nginx-light)");
    return FALSE;
  }
  n->dir = g_strdup (workdir);
  g_mkdir_with_parents (n->dir, 0755);
  n->port = wsi_free_port ();
  log_path = g_build_filename (n->dir, "error.log", NULL);
  conf = g_strdup_printf ("daemon off;\nmaster_process off;\n"
      "worker_processes 1;\npid %s/nginx.pid;\nerror_log %s;\n"
      "events { worker_connections 256; }\n"
      "http {\n access_log off;\n client_body_temp_path %s;\n"
      " proxy_temp_path %s;\n fastcgi_temp_path %s;\n uwsgi_temp_path %s;\n"
      " scgi_temp_path %s;\n keepalive_requests 100000;\n"
      " server { listen 127.0.0.1:%u; root %s; }\n}\n", n->dir, log_path,
      n->dir, n->dir, n->dir, n->dir, n->dir, n->port, root);
  conf_path = g_build_filename (n->dir, "nginx.conf", NULL);
  g_file_set_contents (conf_path, conf, -1, NULL);
  argv[0] = binary;
  argv[1] = "-c";
  argv[2] = conf_path;
  argv[3] = "-e";
  argv[4] = log_path;
  argv[5] = "-p";
  argv[6] = n->dir;
  argv[7] = NULL;
  if (!g_spawn_async (NULL, (gchar **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD
          | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
          wsi_die_with_parent, NULL, &n->pid, &err)) {
    *why = g_strdup_printf ("nginx did not start: %s", err->message);
    g_clear_error (&err);
  } else {
    for (i = 0; i < 100 && !wsi_port_accepts (n->port); i++)
      g_usleep (50000);
    if (i == 100) {
      gchar *log = NULL;
      g_file_get_contents (log_path, &log, NULL, NULL);
      *why = g_strdup_printf ("nginx did not listen on port %u: %s", n->port,
          log ? log : "(no log)");
      g_free (log);
      kill (n->pid, SIGKILL);
      waitpid (n->pid, NULL, 0);
      n->pid = 0;
    }
  }
  g_free (binary);
  g_free (conf);
  g_free (conf_path);
  g_free (log_path);
  return n->pid != 0;
}

static void
wsi_nginx_stop (WsiNginx * n)
{
  if (n->pid != 0) {
    kill (n->pid, SIGTERM);
    waitpid (n->pid, NULL, 0);
    g_spawn_close_pid (n->pid);
  }
  g_free (n->dir);
  memset (n, 0, sizeof (*n));
}

/* Starts faultproxy.py in front of @upstream_port; @args: its options
 * (NULL-terminated), e.g. "--delay-ms", "10", "--fault", "reset:3". */
G_GNUC_UNUSED static gboolean
wsi_proxy_start (WsiProxy * p, guint upstream_port, const gchar * report,
    const gchar * const *args, gchar ** why)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  GError *err = NULL;
  gint out_fd = -1;
  gchar line[32] = { 0 };
  FILE *out;

  memset (p, 0, sizeof (*p));
  g_ptr_array_add (argv, g_strdup ("/usr/bin/python3"));
  g_ptr_array_add (argv, g_strdup (WSI_FAULT_PROXY));
  g_ptr_array_add (argv, g_strdup_printf ("%u", upstream_port));
  g_ptr_array_add (argv, g_strdup ("--report"));
  g_ptr_array_add (argv, g_strdup (report));
  for (; args != NULL && *args != NULL; args++)
    g_ptr_array_add (argv, g_strdup (*args));
  g_ptr_array_add (argv, NULL);
  p->report = g_strdup (report);
  if (!g_spawn_async_with_pipes (NULL, (gchar **) argv->pdata, NULL,
          G_SPAWN_DO_NOT_REAP_CHILD, wsi_die_with_parent, NULL, &p->pid,
          &p->stdin_fd,
          &out_fd, NULL, &err)) {
    *why = g_strdup_printf ("the fault proxy did not start: %s",
        err->message);
    g_clear_error (&err);
    g_ptr_array_unref (argv);
    return FALSE;
  }
  g_ptr_array_unref (argv);
  out = fdopen (out_fd, "r");
  if (fgets (line, sizeof (line), out) != NULL)
    p->port = (guint) g_ascii_strtoull (line, NULL, 10);
  fclose (out);
  if (p->port == 0) {
    *why = g_strdup ("the fault proxy printed no port");
    close (p->stdin_fd);
    waitpid (p->pid, NULL, 0);
    p->pid = 0;
    return FALSE;
  }
  return TRUE;
}

/* How often the proxy that wrote @report injected @name ("requests": how
 * many GETs it saw); 0 when it did not say. */
G_GNUC_UNUSED static guint
wsi_proxy_report_count (const gchar * report, const gchar * name)
{
  gchar *contents = NULL, **lines, **line;
  guint count = 0;

  if (g_file_get_contents (report, &contents, NULL, NULL)) {
    lines = g_strsplit (contents, "\n", -1);
    for (line = lines; *line != NULL; line++) {
      gchar **kv = g_strsplit (*line, " ", 2);
      if (kv[0] != NULL && kv[1] != NULL && name != NULL
          && strcmp (kv[0], name) == 0)
        count = (guint) g_ascii_strtoull (kv[1], NULL, 10);
      g_strfreev (kv);
    }
    g_strfreev (lines);
  }
  g_free (contents);
  return count;
}

/* Stops the proxy; returns how often it injected @fault ("requests": how
 * many GETs it saw). */
G_GNUC_UNUSED static guint
wsi_proxy_stop (WsiProxy * p, const gchar * fault)
{
  guint count;

  if (p->pid != 0) {
    close (p->stdin_fd);
    waitpid (p->pid, NULL, 0);
    g_spawn_close_pid (p->pid);
  }
  count = wsi_proxy_report_count (p->report, fault);
  g_free (p->report);
  memset (p, 0, sizeof (*p));
  return count;
}

#endif /* __WSI_SERVERS_TEST_H__ */
