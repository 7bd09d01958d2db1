@echo off
rem `tend`, the CLI, as the desktop package ships it: run by the app's own runtime as Node.
rem Installed as <app>\resources\bin\tend.cmd; add that folder to PATH to type `tend`.
setlocal
set ELECTRON_RUN_AS_NODE=1
"%~dp0..\..\Tend.exe" "%~dp0..\app.asar\dist\main\cli\tend.js" %*
exit /b %ERRORLEVEL%
